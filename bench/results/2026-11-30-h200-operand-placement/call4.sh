#!/usr/bin/env bash
# Session 6, call 4: flush variants (8x L2, memset then read, B rotating over copies), and a plain read of B after the flush.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:1x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab smallm.bm8.bn16.bk128.wn16.wk8.sk1 > "$R/diag1.log" 2>&1
cat "$R"/diag*.log
cd "$OUT" && tar czf r.tgz r && rm -rf r
