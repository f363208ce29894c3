#!/usr/bin/env bash
# Attention decode steps (b = 32, hq = 32, hkv = 8, one query row, d = 128, Nk 1k-32k) vs SDPA's backends and a copy of K and V.
# Run on the GPU machine (PyTorch with Triton) from the repository root with dist/ installed: bash bench/attention_decode.sh RESULTS_DIR
# Writes session.txt, tune.log, attention_decode.csv, measurements.csv into RESULTS_DIR; prints the table.
set -euo pipefail
out=${1:?usage: bash bench/attention_decode.sh RESULTS_DIR}
source "$(dirname "$0")/session.sh"
python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' \
  >>"$out/session.txt" 2>&1
: >"$out/tune.log"
for sk in 1024 2048 4096 8192 16384 32768; do
  kerntune tune --op attention --shape "b=32,hq=32,hkv=8,sq=1,sk=$sk,d=128" >>"$out/tune.log" \
    2>>"$out/tune_progress.log"
done
PYTHONUNBUFFERED=1 python3 python/bench_decode_attention.py --csv "$out/attention_decode.csv"
kerntune cache export "$out/measurements.csv" >/dev/null
