#!/usr/bin/env bash
# Session 11, call 8: the rest of the gpu tier's sm90 tests at ce18700 (serpentine K rewrote the
# producer's K loop for every config): split-K in both modes and in clusters, swap-AB, multi-atom
# stages, narrow pairs, repeated launches, and last the shipped configs on ragged shapes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
T=dist/libexec/kerntune/kt_tests_gpu
timeout 300 $T --gtest_filter='GemmCorrectness.Sm90SplitKReducesInTheKernelOnRaggedShapes:GemmCorrectness.Sm90ClusterSplitKOnRaggedShapesMatchesTheL2ReductionBitwise:GemmCorrectness.Sm90SwapAbOnDecodeAndRaggedShapes:GemmCorrectness.Sm90MultiAtomStagesOnRaggedK:GemmCorrectness.Sm90NarrowTilesInClusterPairs:GemmCorrectness.Sm90SplitKRepeatedLaunchesAreCorrectAndBitwiseReproducible:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_tests1.log" 2>&1
echo "part 1 rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$R/gpu_tests1.log" | head -14
left=$(( 570 - ($(date +%s) - t0) ))
timeout $left $T --gtest_filter='GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes' > "$R/gpu_tests2.log" 2>&1
echo "part 2 rc $? (limit $left s) at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$R/gpu_tests2.log" | head -8
