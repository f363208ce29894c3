#!/usr/bin/env bash
# Session 6, call 5: the decode kernels on eight separately allocated copies of B, each timed alone, then rotating.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:16x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab > "$R/diag1.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:1x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab smallm.bm8.bn16.bk128.wn16.wk8.sk1 > "$R/diag2.log" 2>&1
cut -c1-150 "$R"/diag*.log
cd "$OUT" && tar czf r.tgz r && rm -rf r
