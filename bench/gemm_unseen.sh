#!/usr/bin/env bash
# GEMM on seeded shapes no suite holds (bench/gemm_unseen_shapes.py), beside cuBLASLt: served from a database tuned on the foundation suite only (nearest-shape dispatch), then tuned per shape.
# Run on the GPU machine from the repository root with dist/ installed: bash bench/gemm_unseen.sh RESULTS_DIR [COUNT] [LAYOUT]
# Writes session.txt, shapes.txt, foundation_tune.log, served.csv, tune.log, tuned.csv, measurements.csv into RESULTS_DIR; prints both geomeans.
set -euo pipefail
out=${1:?usage: bash bench/gemm_unseen.sh RESULTS_DIR [COUNT] [LAYOUT]}
count=${2:-40}
layout=${3:-nt}
source "$(dirname "$0")/session.sh"
python3 bench/gemm_unseen_shapes.py --count "$count" >"$out/shapes.txt"
shapes=()
while read -r s; do shapes+=(--shape "$s"); done <"$out/shapes.txt"
kerntune tune --suite foundation --layout "$layout" >"$out/foundation_tune.log" 2>>"$out/tune_progress.log"
kerntune bench "${shapes[@]}" --layout "$layout" --rounds 4 --csv "$out/served.csv"
kerntune tune "${shapes[@]}" --layout "$layout" >"$out/tune.log" 2>>"$out/tune_progress.log"
kerntune bench "${shapes[@]}" --layout "$layout" --rounds 4 --csv "$out/tuned.csv"
kerntune cache export "$out/measurements.csv" >/dev/null
for f in served tuned; do
  tail -n +2 "$out/$f.csv" | awk -F, -v name="$f" '{ s += log($13); n++; if (min == "" || $13 < min) min = $13 }
    END { printf "%s: %d shapes, geomean %.3f x cuBLASLt, worst %.3f\n", name, n, exp(s / n), min }'
done
