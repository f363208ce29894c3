#!/usr/bin/env bash
# Session 22, call 6: the gpu tier but GemmCorrectness at 4566c53 (trace, workload, runtime,
# attention and the rest).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
{ date -u; echo "build $(cat dist/COMMIT)"; } > "$R/session.log"
( time timeout 560 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='-GemmCorrectness.*' ) > "$R/gpu.log" 2>&1
echo "gpu rc $?"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|tests ran|real" "$R/gpu.log" | head -60
