#!/usr/bin/env bash
# Session 18, call 6: 64 x 4096^2's swapped 64 x 32 bk128 s9 tile against the unswapped one (the
# tuner's first pass had it at 13.44 us, its finalists' interleaved re-measurement at 17.25):
# (a) each tuned alone and benched, alternated three times; (b) the two tuned together (finalists
# re-measured interleaved), twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
NEW="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
S=64x4096x4096; A=sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1; B=$A.swab
cb() {  # name config: tune that config alone, then bench it beside cuBLASLt
  KERNTUNE_DB="$R/$1.db" timeout 60 $NEW tune --shape $S --config $2 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 60 $NEW bench --shape $S --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-12s %-48s ' $1 $2; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1)}'
  rm -f "$R/$1.db"*
}
for pass in 1 2 3; do cb plain_$pass $A; cb swab_$pass $B; done
echo "alternated at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  KERNTUNE_DB="$R/both$i.db" timeout 90 $NEW tune --shape $S --config $A --config $B > "$R/t_both$i.log" 2>&1
  KERNTUNE_DB="$R/both$i.db" $NEW cache export "$R/both$i.csv" > /dev/null 2>&1
  grep -h "^measurement" "$R/both$i.csv" | cut -d, -f6,8,15
done
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
