#!/usr/bin/env bash
# Session 8, call 8 (01db6c4, the model's cluster term): the model-default gpu test (its picks
# changed: unpaired tiles), then predict-only databases (`kerntune tune --predict`, no timing)
# for the short foundation shapes and a big one, benched beside cuBLASLt.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_tests.log" 2>&1
echo "gpu test rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | tail -3
export KERNTUNE_DB="$R/p.db"
for s in 512x512x32768 1536x1536x8192 2048x2048x2048 4096x4096x4096 8192x6144x4096; do
  kerntune tune --predict --shape $s 2>/dev/null | grep -E "winner" | sed "s/^/$s /"
done
for s in 512x512x32768 1536x1536x8192 2048x2048x2048 4096x4096x4096 8192x6144x4096; do
  kerntune bench --shape $s --rounds 6 --csv "$R/bench.csv" > "$R/bench_$s.log" 2>&1
done
cut -d, -f1,5,7,8,10,11,13 "$R/bench.csv"
rm -f "$R"/p.db*
echo "done at $(( $(date +%s) - t0 )) s"
