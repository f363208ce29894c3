#!/usr/bin/env bash
# Session 3, call 8: round 2 retries: the decode suite tuned and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/kerntune.db"
timeout 150 stdbuf -oL kerntune tune --suite decode 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 60 kerntune bench --suite decode --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:|copy" | cut -c1-34,35-80,124-200
done
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
