#!/usr/bin/env bash
# Session 6, call 2: what alternates the sm90 decode kernel between ~13.1 and ~14.1 us, launch to launch.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:16x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab > "$R/diag16.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1 > "$R/diag64.log" 2>&1
cat "$R"/diag*.log
cd "$OUT" && tar czf r.tgz r && rm -rf r
