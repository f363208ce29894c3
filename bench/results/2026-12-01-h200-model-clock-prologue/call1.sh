#!/usr/bin/env bash
# Session 20, call 1: the refitted model (9f06df2) on the device. The gpu tier's model-default
# ragged test (dispatch follows the model); the foundation suite tuned afresh (the new model
# ranks what the tuner measures; the export is a holdout for the fit) and benched beside
# cuBLASLt; `explain` on three picks, predicted beside measured.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_test.log" 2>&1; echo "gpu test rc $?"; grep -E "OK \]|FAILED" "$R/gpu_test.log" | head -3
export KERNTUNE_DB="$R/f.db"
timeout 330 $K tune --suite foundation > "$R/ftune.log" 2>&1; echo "foundation tune rc $? at $(( $(date +%s) - t0 )) s"; tail -2 "$R/ftune.log"
timeout 120 $K bench --suite foundation --rounds 6 --csv "$R/fbench1.csv" > "$R/fbench1.log" 2>&1
grep -E "^gemm" "$R/fbench1.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}'
for s in 1536x1536x8192 4096x4096x4096 512x512x32768; do $K explain --shape $s > "$R/explain_$s.log" 2>&1; grep -E "^(winner|runner|tuned|  predicted)" "$R/explain_$s.log" | head -4; done
$K cache export "$R/fmeasurements.csv" > /dev/null 2>&1; gzip "$R/fmeasurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e fmeasurements | xargs rm -f)
