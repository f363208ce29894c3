#!/usr/bin/env bash
# call7 (at 9eac9b3): the gpu tests the change touches (shipped configs, model-default ragged shapes, multi-atom stages, narrow cluster pairs, swap-AB).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 420 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90ShippedConfigs*:*RaggedShapesEveryDtypeBothLayoutsModelDefault*:*Sm90MultiAtomStages*:*Sm90NarrowTilesInClusterPairs*:*Sm90SwapAb*:*Sm90SplitKReducesInTheKernelOnRaggedShapes*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -20
cd "$OUT" && tar czf r.tgz r && rm -rf r
