#!/usr/bin/env bash
# Session 21, call 1: the model with the first DRAM round trip on the device. The gpu tier's
# model-default ragged test; the foundation and decode suites tuned afresh (the tuner measures
# the model's top candidates, so a worse ranking would show as worse picks) and benched twice
# beside cuBLASLt and the copy; the export, a holdout for the refit.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_test.log" 2>&1; echo "gpu test rc $?"; grep -E "OK \]|FAILED" "$R/gpu_test.log" | head -3
export KERNTUNE_DB="$R/k.db"
timeout 240 $K tune --suite foundation > "$R/ftune.log" 2>&1; echo "foundation tune rc $? at $(( $(date +%s) - t0 )) s"
timeout 200 $K tune --suite decode > "$R/dtune.log" 2>&1; echo "decode tune rc $? at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 120 $K bench --suite foundation --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1
  timeout 90 $K bench --suite decode --rounds 6 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  grep -E "^gemm" "$R/fbench$i.log" "$R/dbench$i.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}' | sed 's/.*log://'
done
$K cache ls > "$R/winners.txt" 2>&1
$K cache export "$R/measurements.csv" > /dev/null 2>&1; gzip "$R/measurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e measurements | xargs rm -f)
