#!/usr/bin/env bash
# RMSNorm (plain and with the fused residual add) tuned on its suites, then timed beside a copy of the same bytes, F.rms_norm and torch.compile, on the suites and on seeded held-out shapes no tune saw.
# Run on the GPU machine (PyTorch with Triton) from the repository root with dist/ installed: bash bench/rmsnorm_vs_torch.sh RESULTS_DIR [BENCHMARK]
# BENCHMARK: serve the held-out shapes in benchmark mode, timing that many configs on the first call (default 0: the dispatch chain's pick).
# Writes session.txt, tune.log, plain.csv, residual.csv, measurements.csv into RESULTS_DIR; prints the tables.
set -euo pipefail
out=${1:?usage: bash bench/rmsnorm_vs_torch.sh RESULTS_DIR [BENCHMARK]}
benchmark=${2:-0}
source "$(dirname "$0")/session.sh"
export KERNTUNE_LIB=$PWD/dist/lib/libkerntune.so PYTHONUNBUFFERED=1
: >"$out/tune.log"
for residual in "" --residual; do
  for suite in rmsnorm rmsnorm-ragged; do
    kerntune tune --op rmsnorm --suite "$suite" $residual >>"$out/tune.log" 2>>"$out/tune_progress.log"
  done
done
python3 bench/rmsnorm_vs_torch.py "$out/plain.csv" --heldout 8 --benchmark "$benchmark"
python3 bench/rmsnorm_vs_torch.py "$out/residual.csv" --heldout 8 --benchmark "$benchmark" --residual
kerntune cache export "$out/measurements.csv" >/dev/null
