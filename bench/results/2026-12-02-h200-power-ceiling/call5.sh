#!/usr/bin/env bash
# Session 23, call 5: ceiling.cu with modes 3 and 4 added (clusters of two taking the GEMM's 48 KB
# a k-tile of one shared chunk: each CTA loading it whole, or each loading half and multicasting
# it), modes 0-2 again beside them; twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
for p in 1 2; do
  timeout 120 .carry/s23/ceiling 10 > "$R/ceiling$p.log" 2>&1; echo "pass $p rc $?"; cat "$R/ceiling$p.log"
done
