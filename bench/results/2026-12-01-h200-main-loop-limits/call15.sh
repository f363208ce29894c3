#!/usr/bin/env bash
# Session 9, call 15: the review's refactor of work_unit (one set_k_range for every unit kind):
# cluster split-K against the L2 reduction bitwise, pairs along N on ragged shapes, the trace.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT"
timeout 240 dist/libexec/kerntune/kt_tests_gpu \
  --gtest_filter='GemmCorrectness.Sm90ClusterSplitK*:GemmCorrectness.Sm90PairsAlongN*:GemmCorrectness.Sm90SplitKRepeated*:GemmTraceTest.*' \
  > "$OUT/gpu_tests.log" 2>&1
echo "rc $?"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$OUT/gpu_tests.log" | head -10
