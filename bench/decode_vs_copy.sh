#!/usr/bin/env bash
# Decode steps (M <= 64, memory-bound) tuned, then benched twice against a device copy of the same bytes and cuBLASLt.
# Run on the GPU machine from the repository root with dist/ installed: bash bench/decode_vs_copy.sh RESULTS_DIR
# Writes session.txt, tune.log, bench1.csv, bench2.csv, measurements.csv into RESULTS_DIR; prints the table.
set -euo pipefail
out=${1:?usage: bash bench/decode_vs_copy.sh RESULTS_DIR}
source "$(dirname "$0")/session.sh"
kerntune tune --suite decode >"$out/tune.log" 2>"$out/tune_progress.log"
rm -f "$out/bench1.csv" "$out/bench2.csv"
for i in 1 2; do kerntune bench --suite decode --rounds 6 --csv "$out/bench$i.csv"; done
kerntune cache export "$out/measurements.csv" >/dev/null
# The table: share of the same-bytes copy's bandwidth (of_copy) and the ratio to cuBLASLt.
echo
printf '%-34s %-48s %14s %14s\n' problem config 'of copy 1, 2' 'vs cuBLASLt'
paste -d, "$out/bench1.csv" "$out/bench2.csv" | awk -F, 'NR > 1 {
  printf "%-34s %-48s %6.1f%% %6.1f%% %6.3f %6.3f\n", $1, $2, 100 * $18, 100 * $(18 + 19), $13, $(13 + 19) }'
