#!/usr/bin/env bash
# Session 7, call 4 (template version 10: split-K partial sums by bulk copies): decode and foundation tuned and benched.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/kerntune.db"
timeout 120 stdbuf -oL kerntune tune --suite decode 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 40 kerntune bench --suite decode --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:" | cut -c1-200
done
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
(cd "$OUT" && tar czf r.tgz r)
export KERNTUNE_DB="$R/foundation.db"
timeout 240 stdbuf -oL kerntune tune --suite foundation 2>"$R/ftune_progress.log" | grep -v rejected > "$R/ftune.log"
echo "ftune rc=$? done at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 60 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1
  grep -v "id=" "$R/fbench$i.log" | grep -E "gemm:|geomean|mean" | cut -c1-200
done
kerntune explain --shape 4100x4096x4096 > "$R/explain4100.log" 2>&1
kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
echo "all done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
cd "$OUT" && rm -f r.tgz && tar czf r.tgz r && rm -rf r
