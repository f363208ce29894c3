#!/usr/bin/env bash
# Session 7, call 8: the model's overlap term (a tenth of the smaller term) on the device: the
# model-default gpu test (its picks changed), decode tuned and benched, foundation tuned.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
timeout 70 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*RaggedShapesEveryDtypeBothLayoutsModelDefault*' > "$R/gpu_tests.log" 2>&1
echo "gpu test rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -5
export KERNTUNE_DB="$R/kerntune.db"
timeout 70 stdbuf -oL kerntune tune --suite decode 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "winner" "$R/tune.log" | cut -c1-150
timeout 35 kerntune bench --suite decode --rounds 8 --csv "$R/bench1.csv" > "$R/bench1.log" 2>&1
grep -v "id=" "$R/bench1.log" | grep -E "gemm:" | cut -c1-200
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
echo "decode done at $(( $(date +%s) - t0 )) s"
export KERNTUNE_DB="$R/foundation.db"
timeout 190 stdbuf -oL kerntune tune --suite foundation 2>"$R/ftune_progress.log" | grep -v rejected > "$R/ftune.log"
echo "ftune rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "winner" "$R/ftune.log" | cut -c1-150
kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
rm -f "$R"/*.db*
