#!/usr/bin/env bash
# Session 19, call 10: the per-SM split-K model at HEAD on the device. The gpu tier's model-default
# ragged test; the decode suite and the split-K / wave-quantization shapes tuned (the model ranks
# what the tuner measures) and benched beside cuBLASLt, twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_test.log" 2>&1; echo "gpu test rc $?"; grep -E "OK \]|FAILED" "$R/gpu_test.log" | head -3
export KERNTUNE_DB="$R/k.db"
timeout 240 $K tune --suite decode > "$R/dtune.log" 2>&1; echo "decode tune rc $?"; tail -2 "$R/dtune.log"
timeout 200 $K tune --shape 512x512x32768 --shape 1536x1536x8192 > "$R/ftune.log" 2>&1; echo "tune rc $?"; tail -2 "$R/ftune.log"
for i in 1 2; do
  timeout 120 $K bench --suite decode --rounds 6 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  timeout 120 $K bench --shape 512x512x32768 --shape 1536x1536x8192 --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1
  grep -E "^gemm" "$R/dbench$i.log" "$R/fbench$i.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}' | sed 's/.*log://'
done
$K cache export "$R/measurements.csv" > /dev/null 2>&1; gzip "$R/measurements.csv"
