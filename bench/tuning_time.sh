#!/usr/bin/env bash
# GEMM tuning time per shape of a suite (default foundation), in suite order into one database: cold (empty at the start) and warm (the same again, cubins cached).
# Run on the GPU machine from the repository root with dist/ installed: bash bench/tuning_time.sh RESULTS_DIR [SUITE]
# Writes session.txt, tune.log and tuning_time.csv (wall seconds and the tuner's compile/measure split per shape and pass) into RESULTS_DIR; prints it.
set -euo pipefail
out=${1:?usage: bash bench/tuning_time.sh RESULTS_DIR [SUITE]}
suite=${2:-foundation}
source "$(dirname "$0")/session.sh"
csv="$out/tuning_time.csv"
echo "problem,pass,wall_s,candidates,compiled,from_cache,compile_s,measure_s" >"$csv"
: >"$out/tune.log"
# The suite's shapes, from explain's header lines ("gemm:bf16:bf16:nt:MxNxK on h200 (...)").
shapes=$(kerntune explain --suite "$suite" | sed -nE 's/^gemm:[^ ]*:([0-9]+x[0-9]+x[0-9]+) on .*/\1/p')
for pass in cold warm; do
  for shape in $shapes; do
    start=$(date +%s%N)
    # --retune: the warm pass tunes again what the cold pass finished (a plain tune skips it).
    kerntune tune --retune --shape "$shape" >"$out/one.log" 2>>"$out/tune_progress.log"
    wall=$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.1f", ns / 1e9 }')
    cat "$out/one.log" >>"$out/tune.log"
    sed -nE 's/^([^ ]+): ([0-9]+) candidates \(([0-9]+) compiled, ([0-9]+) from cache, [0-9]+ failed or rejected\); compile ([0-9.]+)s, measure ([0-9.]+)s$/\1,'"$pass,$wall"',\2,\3,\4,\5,\6/p' \
      "$out/one.log" >>"$csv"
  done
done
rm -f "$out/one.log"
column -s, -t "$csv" 2>/dev/null || cat "$csv"
