#!/usr/bin/env bash
# Session 12, call 10: the trace's summaries through one helper (sorted_stamped): the trace tests
# and one trace.
set -uo pipefail
cat dist/COMMIT
timeout 100 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmTraceTest.*' 2>&1 | grep -E "^\[ +(OK|FAILED) +\]|PASSED|FAILED"
timeout 60 dist/bin/kerntune trace --shape 1536x1536x8192 --config sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
