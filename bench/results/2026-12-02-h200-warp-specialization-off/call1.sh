#!/usr/bin/env bash
# Session 22, call 1: does a grid that leaves SMs idle run the same per-CTA work faster (the
# power-limited clock)? One config (1536^2's pick, 128 x 144 s4 c2 e2) at three shapes of equal
# or near-equal work per CTA: 1536 x 1536 (132 CTAs, the last tile column 96 of 144 useful),
# 1024 x 2304 (128 CTAs, every tile full, 4 SMs idle; the same FLOPs) and 1536 x 1584 (132 full
# CTAs, 3% more FLOPs). Traced alternately, three passes; then each tuned to that config alone
# and benched beside cuBLASLt.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
export KERNTUNE_DB="$R/k.db"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
C=sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
shapes="1536x1536x8192 1024x2304x8192 1536x1584x8192"
for pass in 1 2 3; do
  for s in $shapes; do
    timeout 100 $K trace --reps 60 --shape $s --config $C > "$R/t_${s}_$pass.log" 2>&1
    printf '%-15s p%d ' $s $pass
    grep -oE "launch [0-9.]+ us median \([0-9.]+ min" "$R/t_${s}_$pass.log" | tr '\n' ' '
    awk '/first stage full|main loop done|C stored/ {printf "%s %s ", $1$2, $(NF-2)} /SM clock/ {printf "clk %s ", $(NF-5)}' "$R/t_${s}_$pass.log"; echo
  done
done
for s in $shapes; do
  timeout 120 $K tune --shape $s --config $C > "$R/tune_$s.log" 2>&1 || echo "tune $s rc $?"
done
for b in 1 2; do
  timeout 200 $K bench --shape 1536x1536x8192 --shape 1024x2304x8192 --shape 1536x1584x8192 --rounds 6 --csv "$R/bench$b.csv" > "$R/bench$b.log" 2>&1
  echo "bench $b rc $?"; grep -E "x8192" "$R/bench$b.log"
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e 'bench.\.csv' | xargs rm -f)
