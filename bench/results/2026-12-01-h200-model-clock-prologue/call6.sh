#!/usr/bin/env bash
# Session 20, call 6: the model at the session's last commit on the device. The gpu tier's
# model-default ragged test; the decode suite and the two wave-quantization shapes tuned afresh
# and benched twice beside cuBLASLt and the copy.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_test.log" 2>&1; echo "gpu test rc $?"; grep -E "OK \]|FAILED" "$R/gpu_test.log" | head -3
export KERNTUNE_DB="$R/k.db"
timeout 240 $K tune --suite decode > "$R/dtune.log" 2>&1; echo "decode tune rc $? at $(( $(date +%s) - t0 )) s"
timeout 200 $K tune --shape 512x512x32768 --shape 1536x1536x8192 > "$R/ftune.log" 2>&1; echo "tune rc $? at $(( $(date +%s) - t0 )) s"
grep -E "^gemm|winner" "$R/dtune.log" "$R/ftune.log" | sed 's/.*log://'
for i in 1 2; do
  timeout 120 $K bench --suite decode --rounds 6 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  timeout 120 $K bench --shape 512x512x32768 --shape 1536x1536x8192 --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1
  grep -E "^gemm" "$R/dbench$i.log" "$R/fbench$i.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}' | sed 's/.*log://'
done
$K cache export "$R/measurements.csv" > /dev/null 2>&1; gzip "$R/measurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e measurements | xargs rm -f)
