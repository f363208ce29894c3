#!/usr/bin/env bash
# Session 22, call 5: the rest of GemmCorrectness at 4566c53 (the refactored producer runs in every
# warp-specialized config; call 2 ran the shipped-config, persistent-waves and model-default
# tests).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
{ date -u; echo "build $(cat dist/COMMIT)"; } > "$R/session.log"
( time timeout 560 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.*:-GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmCorrectness.Sm90PersistentWavesWalkKBothWays:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' ) > "$R/gpu.log" 2>&1
echo "gpu rc $?"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|tests ran|real" "$R/gpu.log" | head -30
