#!/usr/bin/env bash
# GEMM suite (default: foundation) tuned, then benched twice beside cuBLASLt in one process.
# Run on the GPU machine from the repository root with dist/ installed: bash bench/gemm_vs_cublaslt.sh RESULTS_DIR [SUITE]
# Writes session.txt, tune.log, bench1.csv, bench2.csv, measurements.csv into RESULTS_DIR; prints the table.
set -euo pipefail
out=${1:?usage: bash bench/gemm_vs_cublaslt.sh RESULTS_DIR [SUITE]}
suite=${2:-foundation}
source "$(dirname "$0")/session.sh"
kerntune tune --suite "$suite" >"$out/tune.log" 2>"$out/tune_progress.log"
rm -f "$out/bench1.csv" "$out/bench2.csv"
for i in 1 2; do kerntune bench --suite "$suite" --rounds 6 --csv "$out/bench$i.csv"; done
kerntune cache export "$out/measurements.csv" >/dev/null
# The table: kerntune / cuBLASLt speed ratio (cuBLASLt time over ours) of both benches per shape.
echo
printf '%-34s %-48s %8s %8s\n' problem config bench1 bench2
paste -d, "$out/bench1.csv" "$out/bench2.csv" | awk -F, 'NR > 1 {
  printf "%-34s %-48s %8.3f %8.3f\n", $1, $5, $13, $(13 + 21) }'
