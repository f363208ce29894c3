#!/usr/bin/env bash
# Session 23, call 6: ceiling.cu with mode 5 added (mode 3's pairs reading one chunk, whole, each,
# launched plainly rather than as clusters), beside modes 0, 1, 3 and 4; twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
for p in 1 2; do
  timeout 120 .carry/s23/ceiling 10 > "$R/ceiling$p.log" 2>&1; echo "pass $p rc $?"; cat "$R/ceiling$p.log"
done
