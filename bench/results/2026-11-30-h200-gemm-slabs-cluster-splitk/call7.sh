#!/usr/bin/env bash
# Session 3, call 6 (final commit): the other sm90 gpu tests (split-K, clusters, output dtypes, model defaults).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 60 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g1.sk1 > "$R/trace.log" 2>&1
grep -v "^ *cta" "$R/trace.log" | head -12
export KERNTUNE_DB="$R/kerntune.db"
kerntune cache import .carry/s3c5_measurements.csv 2>&1 | tail -1
timeout 60 kerntune bench --shape 2048x2048x2048 --shape 1536x1536x8192 --shape 64x4096x4096 --rounds 8 --csv "$R/bench.csv" > "$R/bench.log" 2>&1
grep -v "id=" "$R/bench.log" | grep -E "gemm:" | cut -c1-34,35-80,124-200
timeout $(( 590 - ($(date +%s) - t0) )) dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90SplitK*:GemmCorrectness.Sm90Clusters*:GemmCorrectness.Sm90Writes*:GemmCorrectness.RaggedShapes*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head -20
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
