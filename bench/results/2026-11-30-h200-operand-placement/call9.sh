#!/usr/bin/env bash
# Session 6, call 9: what sits between the start event and the first CTA: the flush versus a shared-memory carveout change.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:16x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g1.sk1.swab > "$R/diag_gap16.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab > "$R/diag_gap64.log" 2>&1
cat "$R"/diag_gap*.log
cd "$OUT" && tar czf r.tgz r && rm -rf r
