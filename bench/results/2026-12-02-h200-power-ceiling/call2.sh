#!/usr/bin/env bash
# Session 23, call 2: ceiling.cu with memory traffic beside the wgmma stream (modes 0, 1, 2), then
# the GEMM's clock at 8192^3 (trace of the last session's pick) for the 2300-k-tile comparison.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
export KERNTUNE_DB="$R/k.db"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,power.limit,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
t0=$(date +%s)
.carry/s23/ceiling 10 > "$R/ceiling.log" 2>&1; echo "ceiling rc $?"; cat "$R/ceiling.log"
timeout 100 $K trace --reps 10 --shape 8192x8192x8192 --config sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st > "$R/t_8192.log" 2>&1
grep -oE "launch [0-9.]+ us median \([0-9.]+ min|check [a-z]+" "$R/t_8192.log" | tr '\n' ' '
awk '/SM clock/ {printf "clk %s\n", $8}' "$R/t_8192.log"
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls)
