#!/usr/bin/env bash
# Session 20, call 3 (c7f3ca9): (a) 512^2 x 32768's pick against the same tile with stages two
# atoms deep (bk128 s3, e0 and e2; not enumerated: 128 x 128 has more than 128 rows plus columns),
# each tuned alone and benched beside cuBLASLt, alternated three times; (b) the foundation and
# decode suites tuned afresh with the refitted model and benched twice (exports: holdouts).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
cb() {  # name shape config: tune that config alone, then bench it beside cuBLASLt
  KERNTUNE_DB="$R/$1.db" timeout 90 $K tune --shape $2 --config $3 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 90 $K bench --shape $2 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-14s %-46s ' $1 $3; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1)}'
  rm -f "$R/$1.db"*
}
for pass in 1 2 3; do
  cb k64_$pass 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g8.sk8
  cb k128e0_$pass 512x512x32768 sm90.bm128.bn128.bk128.s3.c2.e0.cl1.g8.sk8
  cb k128e2_$pass 512x512x32768 sm90.bm128.bn128.bk128.s3.c2.e2.cl1.g8.sk8
done
echo "configs at $(( $(date +%s) - t0 )) s"
export KERNTUNE_DB="$R/k.db"
timeout 300 $K tune --suite foundation > "$R/ftune.log" 2>&1; echo "foundation tune rc $? at $(( $(date +%s) - t0 )) s"
timeout 200 $K tune --suite decode > "$R/dtune.log" 2>&1; echo "decode tune rc $? at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 120 $K bench --suite foundation --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1
  timeout 90 $K bench --suite decode --rounds 6 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  grep -E "^gemm" "$R/fbench$i.log" "$R/dbench$i.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}' | sed 's/.*log://'
done
$K cache export "$R/measurements.csv" > /dev/null 2>&1; gzip "$R/measurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e measurements | xargs rm -f)
