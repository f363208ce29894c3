#!/usr/bin/env bash
# Tuning quality and speed per op on seeded shapes no suite holds (bench/gemm_unseen_shapes.py, bench/attention_unseen_shapes.py): the default search's pick against a wide search's, configs measured, Spearman's rho of the model, cold and warm tune time split into compile and measure.
# Run on the GPU machine from the repository root with dist/ installed: bash bench/tuning_quality.sh RESULTS_DIR [GEMM_SHAPES] [ATTENTION_SHAPES]
# Defaults 12 and 6 (about 6 minutes on the H200); writes session.txt, tuning_quality.csv, tuning_quality.txt (the printed table), runs.jsonl (each tune's --json), measurements.csv (their rows), tune_progress.log into RESULTS_DIR.
set -euo pipefail
out=${1:?usage: bash bench/tuning_quality.sh RESULTS_DIR [GEMM_SHAPES] [ATTENTION_SHAPES]}
gemm=${2:-12}
attention=${3:-6}
source "$(dirname "$0")/session.sh"
python3 bench/tuning_quality.py "$out" --gemm "$gemm" --attention "$attention" \
  | tee "$out/tuning_quality.txt"
