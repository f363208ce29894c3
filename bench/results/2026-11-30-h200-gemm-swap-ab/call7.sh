#!/usr/bin/env bash
# Session 4, call 7 (final, at the committed swap-AB code): the gpu tier's sm90 tests (shipped configs with the swab ones, swap-AB, split-K on ragged shapes, FP32 outputs, model defaults), then the decode suite and the two wave/split shapes tuned and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/kerntune.db"
SH="--suite decode --shape 512x512x32768 --shape 1536x1536x8192"
timeout 110 stdbuf -oL kerntune tune $SH 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"; grep -E "winner" "$R/tune.log"
for i in 1 2; do
  timeout 40 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:" | cut -c1-200
done
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
timeout 420 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90ShippedConfigs*:GemmCorrectness.Sm90SwapAb*:GemmCorrectness.Sm90SplitKReducesInTheKernelOnRaggedShapes:GemmCorrectness.Sm90WritesFp32AndMixedOutputs:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head -20
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
