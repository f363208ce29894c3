#!/usr/bin/env bash
# Session 15, call 1: what a partly filled last wave costs. One config (128 x 256, two consumers,
# e2, cl1, g8) on shapes whose tile counts fill 132 SMs to different fractions of their last wave,
# beside cuBLASLt: 8192^3 (2048 tiles, 15.52 waves), 8448x8192x8192 (2112, 16.0), 8448x7680x8192
# (1980, 15.0); 4096^3 (512, 3.88), 4224x4096x4096 (528, 4.0), 4096x3840x4096 (480, 3.64).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/w.db"
C=sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
S="8192x8192x8192 8448x8192x8192 8448x7680x8192 4096x4096x4096 4224x4096x4096 4096x3840x4096"
for s in $S; do
  timeout 90 dist/bin/kerntune tune --shape $s --config $C >> "$R/tune.log" 2>&1 || echo "tune $s rc $?"
done
echo "tuned at $(( $(date +%s) - t0 )) s"
args=""; for s in $S; do args="$args --shape $s"; done
for i in 0 1 2; do
  timeout 150 dist/bin/kerntune bench $args --rounds 5 --csv "$R/bench_$i.csv" > "$R/bench_$i.log" 2>&1 || echo "bench $i rc $?"
done
echo "benched at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
