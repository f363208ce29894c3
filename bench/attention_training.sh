#!/usr/bin/env bash
# Loss curves of a small language model (2 layers, d_model 1024, 8 heads, seqlen 1024, BF16) trained 200 steps from one seed with SDPA's FlashAttention-2 and memory-efficient backends, kerntune's attention, and kerntune under torch.compile (python/tests/test_training_gpu.py, which also checks that they agree).
# Run on the GPU machine (PyTorch with Triton) from the repository root with dist/ installed: bash bench/attention_training.sh RESULTS_DIR [SEED]
# Writes session.txt and training_losses.csv (every step's loss of each run) into RESULTS_DIR; prints the checks and the 20-step means. About 2 minutes, most of it torch.compile.
set -euo pipefail
out=${1:?usage: bash bench/attention_training.sh RESULTS_DIR [SEED]}
seed=${2:-37}
source "$(dirname "$0")/session.sh"
python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' \
  >>"$out/session.txt" 2>&1
PYTHONUNBUFFERED=1 PYTHONPATH=python python3 python/tests/test_training_gpu.py --seed "$seed" \
  --csv "$out/training_losses.csv"
