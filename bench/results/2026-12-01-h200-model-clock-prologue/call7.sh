#!/usr/bin/env bash
# Session 20, call 7 (08e9b37, the review's mends): the gpu tier's model-default ragged test, and
# the decode suite tuned and benched once.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
{ date -u; echo "build $(cat dist/COMMIT)"; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_test.log" 2>&1; echo "gpu test rc $?"; grep -E "OK \]|FAILED" "$R/gpu_test.log" | head -3
export KERNTUNE_DB="$R/k.db"
timeout 240 $K tune --suite decode > "$R/dtune.log" 2>&1; echo "decode tune rc $?"
timeout 120 $K bench --suite decode --rounds 6 --csv "$R/dbench1.csv" > "$R/dbench1.log" 2>&1
grep -E "^gemm" "$R/dbench1.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}'
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
