#!/usr/bin/env bash
# Session 14, call 8: the gpu tier's tests of the TMA-store epilogue (template version 13: rounds
# of slabs) and of the configs around it, on the new build.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
F='GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmCorrectness.Sm90WritesFp32AndMixedOutputs:GemmCorrectness.Sm90ClustersWithOddTileRowsAndTails:GemmCorrectness.Sm90PersistentWavesWalkKBothWays:GemmCorrectness.Sm90PairsAlongNOnRaggedShapes:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault:GemmCorrectness.Sm90SplitKReducesInTheKernelOnRaggedShapes:GemmCorrectness.Sm90MultiAtomStagesOnRaggedK:GemmCorrectness.HandPickedTilesIncludingSplitKOnRaggedShapes'
timeout 540 dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | head -14
gzip "$R/gpu_tests.log"
