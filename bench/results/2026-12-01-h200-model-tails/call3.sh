#!/usr/bin/env bash
# Session 18, call 3: (a) the deepest ring that fits for the decode steps' streaming tiles (64 x
# 4096^2's 64 x 32 bk128: 8 stages against 9; 64 x 14336 x 4096's 64 x 128 e2: 6 against 8),
# alternated, three passes; (b) the foundation suite tuned with the new model (stream-K's fix-up
# and cluster split-K's exchange after the stream) and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
NEW="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "new $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
cb() {  # name shape config: tune that config alone, then bench it beside cuBLASLt
  KERNTUNE_DB="$R/$1.db" timeout 90 $NEW tune --shape $2 --config $3 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 90 $NEW bench --shape $2 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-22s %-50s ' $1 $3; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1)}'
  rm -f "$R/$1.db"*
}
for pass in 1 2 3; do
  cb d64_s8_$pass 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1
  cb d64_s9_$pass 64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1
  cb up14_s6_$pass 64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1
  cb up14_s8_$pass 64x14336x4096 sm90.bm64.bn128.bk64.s8.c1.e2.cl1.g1.sk1
done
echo "configs at $(( $(date +%s) - t0 )) s"
KERNTUNE_DB="$R/f.db" timeout 300 $NEW tune --suite foundation > "$R/ftune.log" 2>&1
echo "foundation tuned at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  KERNTUNE_DB="$R/f.db" timeout 120 $NEW bench --suite foundation --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1
  grep -E "^gemm" "$R/fbench$i.log" | awk '{print $1, $2, $(NF-1)}'
done
KERNTUNE_DB="$R/f.db" $NEW cache export "$R/fmeasurements.csv" > /dev/null 2>&1 && gzip "$R/fmeasurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
