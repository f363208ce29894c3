#!/usr/bin/env bash
# Attention backward (dQ, dK, dV from dO; the FlashAttention benchmark: 16k tokens, hidden 2048, d 64 and 128, full and causal; GQA 32/8 causal at 8k; d = 256) vs SDPA's cuDNN and FlashAttention-2 backward, BF16.
# Run on the GPU machine (PyTorch with Triton) from the repository root with dist/ installed: bash bench/attention_backward_vs_sdpa.sh RESULTS_DIR
# Writes session.txt (with the tuning and bench seconds), tune.log, attention_backward_vs_sdpa.csv, attention_backward_heldout.csv (8 seeded shapes no suite holds, d 64/128/256, served untuned), measurements.csv into RESULTS_DIR; prints the tables. Meant to take under 8 minutes on an H200.
set -euo pipefail
out=${1:?usage: bash bench/attention_backward_vs_sdpa.sh RESULTS_DIR}
source "$(dirname "$0")/session.sh"
python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' \
  >>"$out/session.txt" 2>&1
: >"$out/tune.log"
start=$SECONDS
# The cases of python/bench_attention_backward.py: both masks of the d = 128 and d = 64 suites, GQA
# 32/8 causal at 8k, and d = 256 full, which is tuned where the backward takes that head_dim (the
# bench reports it unsupported where it does not, with the library's reason).
for suite in attention-backward-d128 attention-backward-d64; do
  for mask in "" --causal; do
    kerntune tune --op attention-backward --suite "$suite" $mask >>"$out/tune.log" \
      2>>"$out/tune_progress.log"
  done
done
kerntune tune --op attention-backward --suite attention-backward-extra --causal >>"$out/tune.log" \
  2>>"$out/tune_progress.log"
kerntune tune --op attention-backward --shape b=2,h=8,s=4096,d=256 >>"$out/tune.log" \
  2>>"$out/tune_progress.log" ||
  echo "d=256 not tuned: $(tail -n 1 "$out/tune_progress.log")" | tee -a "$out/tune.log"
echo "tuning: $((SECONDS - start)) s" >>"$out/session.txt"
start=$SECONDS
status=0
PYTHONUNBUFFERED=1 python3 python/bench_attention_backward.py \
  --csv "$out/attention_backward_vs_sdpa.csv" || status=$?
# Shapes no suite holds, served from the tuned neighbours or the model.
PYTHONUNBUFFERED=1 python3 python/bench_attention_backward.py --heldout 8 \
  --csv "$out/attention_backward_heldout.csv" || status=$?
echo "bench: $((SECONDS - start)) s" >>"$out/session.txt"
kerntune cache export "$out/measurements.csv" >/dev/null
exit "$status"
