#!/usr/bin/env bash
# Attention forward (the FlashAttention benchmark: 16k tokens, hidden 2048; GQA; d = 256) vs SDPA's FlashAttention-2 and cuDNN, BF16 and FP16.
# Run on the GPU machine (PyTorch with Triton) from the repository root with dist/ installed: bash bench/attention_vs_sdpa.sh RESULTS_DIR [DTYPES]
# DTYPES: comma-separated, default bf16,fp16.
# Writes session.txt, tune.log, attention_vs_sdpa.csv, attention_heldout.csv, measurements.csv into RESULTS_DIR; prints the tables.
set -euo pipefail
out=${1:?usage: bash bench/attention_vs_sdpa.sh RESULTS_DIR [DTYPES]}
dtypes=${2:-bf16,fp16}
source "$(dirname "$0")/session.sh"
python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' \
  >>"$out/session.txt" 2>&1
: >"$out/tune.log"
# The cases of python/bench_attention.py: both masks of the d = 128 and d = 64 suites, GQA 32/8
# causal at 8k, and d = 256 full.
for dtype in ${dtypes//,/ }; do
  for suite in attention-d128 attention-d64; do
    for mask in "" --causal; do
      kerntune tune --op attention --suite "$suite" --dtype "$dtype" $mask >>"$out/tune.log" \
        2>>"$out/tune_progress.log"
    done
  done
  kerntune tune --op attention --shape b=1,hq=32,hkv=8,s=8192,d=128 --dtype "$dtype" --causal \
    >>"$out/tune.log" 2>>"$out/tune_progress.log"
  kerntune tune --op attention --shape b=2,h=8,s=4096,d=256 --dtype "$dtype" >>"$out/tune.log" \
    2>>"$out/tune_progress.log"
done
PYTHONUNBUFFERED=1 python3 python/bench_attention.py --dtypes "$dtypes" --csv "$out/attention_vs_sdpa.csv"
# Shapes no suite holds, served from the tuned neighbours or the model.
PYTHONUNBUFFERED=1 python3 python/bench_attention.py --dtypes "$dtypes" --heldout 8 \
  --csv "$out/attention_heldout.csv"
kerntune cache export "$out/measurements.csv" >/dev/null
