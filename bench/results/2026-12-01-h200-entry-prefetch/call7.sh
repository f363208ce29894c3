#!/usr/bin/env bash
# Session 13, call 7: the gpu tier but GemmCorrectness at the session's code (the model's N-keyed
# wgmma factor; kernels unchanged since b113832).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT"
GTEST_FILTER='-GemmCorrectness.*' bash bench/gpu_session.sh tests > "$OUT/call7_stdout.txt" 2>&1
status=$?
grep -E "^\[  (PASSED|FAILED) |FAILED \]|tests ran" "$OUT/gpu_tests.log" | head -20
echo "status $status"
