#!/usr/bin/env bash
# Session 3, call 9: the calibrated split-K model: foundation + decode tuned and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/kerntune.db"
SH="--suite foundation --shape 1x4096x4096 --shape 64x4096x4096"
timeout 200 stdbuf -oL kerntune tune $SH 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 90 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:|geomean|copy" | cut -c1-34,35-80,124-200
done
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
timeout 30 kerntune explain $SH > "$R/explain.txt" 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
