#!/usr/bin/env bash
# Session 23, call 4: the rest of GemmCorrectness at HEAD (split-K, cluster split-K bitwise,
# stream-K, pairs, swap-AB, multi-atom stages, small-M).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
{ date -u; echo "build $(cat dist/COMMIT)"; } > "$R/session.log"
( time timeout 560 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.*:-GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmCorrectness.Sm90PersistentWavesWalkKBothWays:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' ) > "$R/gpu.log" 2>&1
echo "rc $?"; grep -E '^\[  (PASSED|FAILED) |FAILED|real|^\[       OK' "$R/gpu.log" | tail -20
