#!/usr/bin/env bash
# A packed variable-length batch (16 sequences of 100..8192 tokens, seed 36, hq 32, hkv 8, d 128, causal and full) vs PyTorch's SDPA per sequence and on jagged nested tensors.
# Run on the GPU machine (PyTorch with Triton) from the repository root with dist/ installed: bash bench/attention_varlen.sh RESULTS_DIR
# Writes session.txt, tune.log, attention_varlen.csv, measurements.csv into RESULTS_DIR; prints the table.
set -euo pipefail
out=${1:?usage: bash bench/attention_varlen.sh RESULTS_DIR}
source "$(dirname "$0")/session.sh"
python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' \
  >>"$out/session.txt" 2>&1
shape=$(python3 python/bench_varlen_attention.py --print-shape)
: >"$out/tune.log"
for mask in "" --causal; do
  kerntune tune --op attention --shape "$shape" $mask >>"$out/tune.log" 2>>"$out/tune_progress.log"
done
PYTHONUNBUFFERED=1 python3 python/bench_varlen_attention.py --csv "$out/attention_varlen.csv"
kerntune cache export "$out/measurements.csv" >/dev/null
