#!/usr/bin/env bash
# Session 23, call 1: the tensor cores' throughput at the power limit with no memory traffic
# (ceiling.cu, built here with nvcc -gencode arch=compute_90a,code=sm_90a -O2), run twice around
# the GEMM traces and benches of 4096^3, 4100 x 4096^2 and 1536^2 x 8192 with the last session's
# picks, so both are measured in one process lifetime of the GPU's power state.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
export KERNTUNE_DB="$R/k.db"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
t0=$(date +%s)
.carry/s23/ceiling 10 > "$R/ceiling1.log" 2>&1; echo "ceiling 1 rc $?"; cat "$R/ceiling1.log"
picks=(
  "4096x4096x4096 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1"
  "4100x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1"
)
for pr in "${picks[@]}"; do
  set -- $pr
  timeout 100 $K trace --reps 40 --shape $1 --config $2 > "$R/t_$1.log" 2>&1
  printf '%-15s ' $1
  grep -oE "launch [0-9.]+ us median \([0-9.]+ min|check [a-z]+" "$R/t_$1.log" | tr '\n' ' '
  awk '/first stage full|main loop done|C stored/ {printf "%s %s ", $1$2, $(NF-2)} /SM clock/ {printf "clk %s", $8}' "$R/t_$1.log"; echo
  timeout 120 $K tune --shape $1 --config $2 > "$R/tune_$1.log" 2>&1 || echo "tune $1 rc $?"
done
for b in 1 2; do
  timeout 200 $K bench --shape 4096x4096x4096 --shape 4100x4096x4096 --shape 1536x1536x8192 --rounds 6 --csv "$R/bench$b.csv" > "$R/bench$b.log" 2>&1
  echo "bench $b rc $?"; grep -E "^gemm" "$R/bench$b.log" | awk '{print $1, $(NF-6), $(NF-5), $(NF-1), $NF}'
done
.carry/s23/ceiling 10 > "$R/ceiling2.log" 2>&1; echo "ceiling 2 rc $?"; cat "$R/ceiling2.log"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e 'bench.\.csv' | xargs rm -f)
