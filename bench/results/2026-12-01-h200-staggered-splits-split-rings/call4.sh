#!/usr/bin/env bash
# Session 19, call 4: xbench (xbench.cu beside this file, nvcc -arch=sm_90a -O2): one SM's rate for
# a partial tile out and in, by bulk copies and threads' accesses, through L2 and through
# distributed shared memory.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT"
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$OUT/session.log" 2>&1
timeout 300 .carry/s19/xbench 2>&1 | tee "$OUT/xbench.log"
