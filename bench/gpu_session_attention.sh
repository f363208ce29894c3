#!/usr/bin/env bash
# GPU session for attention: the gpu-tier attention tests and the Python tests, then tune the
# FlashAttention benchmark suite (16k tokens, hidden 2048, causal and not, d = 64 and 128, plus
# GQA and d = 256) and compare with SDPA's FlashAttention-2 and cuDNN backends in one process.
# Expects dist/ (built with -DKT_INSTALL_TESTS=ON); writes logs and CSV under $OUT.
#   usage: bash bench/gpu_session_attention.sh tests|perf   (each fits one 10-minute call)
set -uo pipefail
phase=${1:-tests}
OUT=${OUT:-/tmp/kt_out}
mkdir -p "$OUT"
export PATH="$PWD/dist/bin:$PATH" KERNTUNE_DB="$OUT/kerntune.db" PYTHONUNBUFFERED=1
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(cat dist/COMMIT 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())'
} 2>&1 | tee "$OUT/session.log"
if [ "$phase" = tests ]; then
# Line-buffered, a line per finished test: a run stopped by the time limit keeps what it did.
timeout 300 stdbuf -oL dist/libexec/kerntune/kt_tests_gpu --gtest_filter="${GTEST_FILTER:-Attention*}" >"$OUT/gpu_tests.log" 2>&1
grep -E '^\[ +(OK|FAILED|PASSED) ' "$OUT/gpu_tests.log" | tail -40
timeout 200 python3 -m pytest -q python/tests/test_attention_torch.py 2>&1 | tail -15 | tee -a "$OUT/gpu_tests.log"
exit 0
fi
start=$(date +%s)
for suite in attention-d128 attention-d64 attention-extra; do
  for mask in "" "--causal"; do
    [ "$suite" = attention-extra ] && [ -z "$mask" ] && continue
    timeout 80 kerntune tune --op attention --suite "$suite" $mask 2>>"$OUT/tune_progress.log" | tee -a "$OUT/tune.log"
  done
done
timeout 60 kerntune tune --op attention --shape b=2,h=8,s=4096,d=256 2>>"$OUT/tune_progress.log" | tee -a "$OUT/tune.log"
echo "tune wall seconds: $(( $(date +%s) - start ))" | tee -a "$OUT/tune.log"
timeout 180 python3 python/bench_attention.py --csv "$OUT/attention_vs_sdpa.csv" 2>&1 | tee "$OUT/bench.log"
kerntune cache export "$OUT/measurements.csv" >/dev/null 2>&1
rm -f "$OUT"/kerntune.db*
