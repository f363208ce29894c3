#!/usr/bin/env bash
# Session 6, call 13 (final commit): the gpu tests the model change touches (model defaults on ragged shapes, the tune -> database -> runtime path), and the operand-set test.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
timeout 200 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*RaggedShapesEveryDtypeBothLayoutsModelDefault*:*EveryOperandSet*:RuntimeDispatch*:StaleCubin*:*HandPickedTiles*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -20
cd "$OUT" && tar czf r.tgz r && rm -rf r
