#!/usr/bin/env bash
# GEMM on seeded shapes no suite holds (bench/gemm_unseen_shapes.py), beside cuBLASLt: served from a database tuned on the foundation suite only (nearest-shape dispatch), then tuned per shape.
# Run on the GPU machine from the repository root with dist/ installed: bash bench/gemm_unseen.sh RESULTS_DIR [COUNT] [LAYOUT] [PHASE] [BENCHMARK] [SEED]
# PHASE is both (default), served or tuned: the two halves are independent (each starts from an empty database), so a machine with a time limit per command can run them one at a time into the same RESULTS_DIR.
# BENCHMARK N (default 0, none): the served half also serves the shapes in benchmark mode (kerntune bench --benchmark N: each shape's first call times N of its dispatch choices) into served_benchmark.csv.
# SEED (default 38, the shapes of every committed run): another seed draws shapes the model was never fitted on.
# Writes session.txt (session_PHASE.txt for one half), shapes.txt, foundation_tune.log, served.csv, served_benchmark.csv, foundation_measurements.csv.gz, tune.log, tuned.csv, measurements.csv.gz, model_regret.txt and, when the served half ran first, served_again.csv into RESULTS_DIR; prints the geomean of each CSV there.
set -euo pipefail
out=${1:?usage: bash bench/gemm_unseen.sh RESULTS_DIR [COUNT] [LAYOUT] [PHASE]}
count=${2:-40}
layout=${3:-nt}
phase=${4:-both}
benchmark=${5:-0}
seed=${6:-38}
case "$phase" in both | served | tuned) ;; *) echo "PHASE must be both, served or tuned, not $phase" >&2; exit 2 ;; esac
source "$(dirname "$0")/session.sh"
[ "$phase" = both ] || mv "$out/session.txt" "$out/session_$phase.txt"
python3 bench/gemm_unseen_shapes.py --count "$count" --seed "$seed" >"$out/shapes.txt"
shapes=()
while read -r s; do shapes+=(--shape "$s"); done <"$out/shapes.txt"
if [ "$phase" != tuned ]; then
  kerntune tune --suite foundation --layout "$layout" >"$out/foundation_tune.log" 2>>"$out/tune_progress.log"
  kerntune bench "${shapes[@]}" --layout "$layout" --rounds 4 --benchmark 0 --csv "$out/served.csv"
  if [ "$benchmark" -gt 0 ]; then
    kerntune bench "${shapes[@]}" --layout "$layout" --rounds 4 --benchmark "$benchmark" \
      --csv "$out/served_benchmark.csv"
  fi
  # What the served shapes were dispatched from: `kerntune cache import` it and `kerntune -v
  # explain --shape S --db D` replays the dispatch offline.
  kerntune cache export "$out/foundation_measurements.csv" >/dev/null
  gzip -f "$out/foundation_measurements.csv"
fi
if [ "$phase" != served ]; then
  kerntune tune "${shapes[@]}" --layout "$layout" >"$out/tune.log" 2>>"$out/tune_progress.log"
  kerntune bench "${shapes[@]}" --layout "$layout" --rounds 4 --csv "$out/tuned.csv"
  kerntune cache export "$out/measurements.csv" >/dev/null
  gzip -f "$out/measurements.csv"
  # How well the model's first pick among the measured configs did (bench/NOTES.md, "The GEMM
  # model and its calibration").
  python3 "$(dirname "$0")/model_regret.py" "$(command -v kerntune)" "$out/measurements.csv.gz" \
    --top 24 --worst 3 >"$out/model_regret.txt" || echo "model_regret.py failed" >&2
  cat "$out/model_regret.txt"
  if [ -f "$out/foundation_measurements.csv.gz" ]; then
    # The served half again, right after the tuned bench, from its foundation database: served
    # over tuned then compares two runs minutes apart, not two sessions.
    served_db="$out/served_again.db"
    rm -f "$served_db" "$out/served_again.csv"
    gunzip -c "$out/foundation_measurements.csv.gz" >"$out/foundation_measurements.csv"
    kerntune cache import "$out/foundation_measurements.csv" --db "$served_db" >/dev/null
    rm -f "$out/foundation_measurements.csv"
    kerntune bench "${shapes[@]}" --layout "$layout" --rounds 4 --benchmark 0 --db "$served_db" \
      --csv "$out/served_again.csv"
    rm -f "$served_db" "$served_db-wal" "$served_db-shm"
  fi
fi
for f in served served_benchmark served_again tuned; do
  [ -f "$out/$f.csv" ] || continue
  tail -n +2 "$out/$f.csv" | awk -F, -v name="$f" '{ s += log($13); n++; if (min == "" || $13 < min) min = $13 }
    END { printf "%s: %d shapes, geomean %.3f x cuBLASLt, worst %.3f\n", name, n, exp(s / n), min }'
done
served=$out/served.csv
[ -f "$out/served_again.csv" ] && served=$out/served_again.csv
for f in "$served" "$out/served_benchmark.csv"; do
  [ -f "$f" ] && [ -f "$out/tuned.csv" ] || continue
  # Served over tuned, each as its ratio to cuBLASLt in its own run: the acceptance counts shapes
  # served within 5% of the per-shape tune.
  awk -F, -v name="$(basename "$f" .csv)" 'FNR == 1 { next } NR == FNR { tuned[$1] = $13; next }
    ($1 in tuned) { r = $13 / tuned[$1]; n++; if (r >= 0.95) ok++; if (min == "" || r < min) { min = r; at = $1 } }
    END { printf "%s / tuned: %d of %d shapes within 5%%, worst %.3f (%s)\n", name, ok, n, min, at }' \
    "$out/tuned.csv" "$f"
done
