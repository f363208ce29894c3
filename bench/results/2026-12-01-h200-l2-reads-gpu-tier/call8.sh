#!/usr/bin/env bash
# Session 12, call 8: the shared precompile helper (tests/support/precompile.hpp) in both gpu
# test files: the attention tests and three GemmCorrectness tests.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
cat dist/COMMIT
( time timeout 400 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='Attention*:GemmCorrectness.Sm90SplitKReducesInTheKernelOnRaggedShapes:GemmCorrectness.Sm90ClusterSplitKOnRaggedShapesMatchesTheL2ReductionBitwise:GemmCorrectness.HandPickedTilesIncludingSplitKOnRaggedShapes' ) > "$R/gpu_tests.log" 2>&1
echo "rc $?"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|tests ran|real" "$R/gpu_tests.log" | head -30
