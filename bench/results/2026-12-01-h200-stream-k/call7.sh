#!/usr/bin/env bash
# Session 15, call 7: the rest of the gpu tier's GEMM correctness tests at 85a59b6 (call 4 ran
# the ones stream-K touches).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
F='GemmCorrectness.*:SmallM*:-GemmCorrectness.Sm90StreamKOnRaggedShapes:GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault:GemmCorrectness.Sm90SplitKRepeatedLaunchesAreCorrectAndBitwiseReproducible:GemmCorrectness.Sm90PersistentWavesWalkKBothWays:GemmCorrectness.EveryOperandSetTheProtocolRotatesOverHoldsTheCheckedInputs'
timeout 570 dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | head -30
gzip "$R/gpu_tests.log"
