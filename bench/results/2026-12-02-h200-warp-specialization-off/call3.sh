#!/usr/bin/env bash
# Session 22, call 3: the traces of call 2, whose gpu tests passed and whose trace loop stopped
# on a script error: each pair (with and without a producer warpgroup) traced alternately, two
# passes, at seven shapes; then the foundation suite tuned over the space that now holds the
# .nows configs, and benched once beside cuBLASLt.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
export KERNTUNE_DB="$R/k.db"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
t0=$(date +%s)
pairs=(
  "4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "2048x2048x2048 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1"
  "4100x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "64x14336x4096 sm90.bm64.bn128.bk64.s8.c1.e2.cl1.g8.sk1"
  "64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g1.sk1"
)
for pass in 1 2; do
  for pr in "${pairs[@]}"; do
    set -- $pr
    for v in "" .nows; do
      log="$R/t_${1}${v}_$pass.log"
      timeout 100 $K trace --reps 40 --shape $1 --config $2$v > "$log" 2>&1
      printf '%-15s %-5s p%d ' $1 "${v:-.ws}" $pass
      grep -oE "launch [0-9.]+ us median \([0-9.]+ min|check [a-z]+" "$log" | tr '\n' ' '
      awk '/first stage full|main loop done|C stored/ {printf "%s %s ", $1$2, $(NF-2)} /SM clock/ {printf "clk %s", $8}' "$log"; echo
    done
  done
done
echo "traces done at $(( $(date +%s) - t0 )) s"
timeout 200 $K tune --suite foundation > "$R/ftune.log" 2>&1; echo "foundation tune rc $? at $(( $(date +%s) - t0 )) s"
$K cache ls > "$R/winners.txt" 2>&1; grep -c nows "$R/winners.txt"
timeout 120 $K bench --suite foundation --rounds 6 --csv "$R/fbench1.csv" > "$R/fbench1.log" 2>&1
grep -E "^gemm" "$R/fbench1.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}'
$K cache export "$R/measurements.csv" > /dev/null 2>&1; gzip "$R/measurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e measurements | xargs rm -f)
