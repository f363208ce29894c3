#!/usr/bin/env bash
# Session 12, call 5: the attention tests with the space test's kernels compiled in parallel first.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
cat dist/COMMIT
( time timeout 500 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='Attention*' ) > "$R/gpu_attention.log" 2>&1
echo "rc $?"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|tests ran|real" "$R/gpu_attention.log" | head -30
