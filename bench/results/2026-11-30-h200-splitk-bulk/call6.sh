#!/usr/bin/env bash
# Session 7, call 6 (final kernels): the split-K gpu tests again after the 128-accumulator tiles
# went back to per-thread partial sums, and 512^2 x 32768 re-tuned and benched.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
name=k32k; shape=512x512x32768
KERNTUNE_DB="$R/$name.db" timeout 120 kerntune tune --shape $shape 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
KERNTUNE_DB="$R/$name.db" timeout 40 kerntune bench --shape "$shape" --rounds 8 --csv "$R/${name}_bench.csv" > "$R/${name}_bench.log" 2>&1
grep -E "gemm:" "$R/${name}_bench.log" | grep -v "id=" | cut -c1-200
echo "k32k at $(( $(date +%s) - t0 )) s"
timeout 420 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90SplitK*:*Sm90ClusterSplitK*:*SwapAb*:*MultiAtom*:GemmTraceTest.*:*HandPickedTiles*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -20
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
