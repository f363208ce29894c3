#!/usr/bin/env bash
# Session 6, call 1: one sm90 decode kernel timed the tuner's way and the bench's way in one process.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
S=sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab
M=smallm.bm8.bn16.bk128.wn16.wk8.sk1
.carry/diag/diag gemm:bf16:bf16:nt:1x4096x4096 $S $M > "$R/diag1.log" 2>&1
.carry/diag/diag gemm:bf16:bf16:nt:16x4096x4096 $S > "$R/diag16.log" 2>&1
# The runtime's path for the same kernel: a database holding only it, then kerntune bench.
dist/bin/kerntune tune --shape 1x4096x4096 --config $S --db "$R/s.db" > "$R/tune_s.log" 2>&1
dist/bin/kerntune bench --shape 1x4096x4096 --db "$R/s.db" --rounds 8 > "$R/bench_s.log" 2>&1
dist/bin/kerntune bench --shape 1x4096x4096 --db "$R/s.db" --rounds 8 --no-baseline > "$R/bench_s_nobase.log" 2>&1
cat "$R"/diag*.log "$R"/bench_s*.log
cd "$OUT" && tar czf r.tgz r && rm -rf r
