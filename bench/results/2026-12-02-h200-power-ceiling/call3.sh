#!/usr/bin/env bash
# Session 23, call 3: the gpu tier at HEAD (f9e70f7, whose PTX equals 4566c53's) in two parts:
# the shipped configs, persistent waves and model-default tests, then every test outside
# GemmCorrectness. Call 4 runs the rest of GemmCorrectness.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
{ date -u; echo "build $(cat dist/COMMIT)"; } > "$R/session.log"
( time timeout 330 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmCorrectness.Sm90PersistentWavesWalkKBothWays:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' ) > "$R/gpu1.log" 2>&1
echo "part 1 rc $?"; grep -E '^\[  (PASSED|FAILED) |^\[       OK|FAILED|real' "$R/gpu1.log" | tail -8
( time timeout 200 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='-GemmCorrectness.*' ) > "$R/gpu2.log" 2>&1
echo "part 2 rc $?"; grep -E '^\[  (PASSED|FAILED) |FAILED|real' "$R/gpu2.log" | tail -8
