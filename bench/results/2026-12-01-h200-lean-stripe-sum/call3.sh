#!/usr/bin/env bash
# Session 17, call 3: the rest of the gpu tier at the final commit (call 1 ran its four split-K
# and shipped-config tests on the same kernels).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
F='-GemmCorrectness.Sm90SplitKReducesInTheKernelOnRaggedShapes:GemmCorrectness.Sm90ClusterSplitKOnRaggedShapesMatchesTheL2ReductionBitwise:GemmCorrectness.Sm90SplitKRepeatedLaunchesAreCorrectAndBitwiseReproducible:GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes'
timeout 540 dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests_rest.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |FAILED \]|tests ran" "$R/gpu_tests_rest.log" | head -20
gzip "$R/gpu_tests_rest.log"
echo "done at $(( $(date +%s) - t0 )) s"
