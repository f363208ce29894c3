#!/usr/bin/env bash
# Session 3, call 3: tensor-map prefetch: the call-2 picks benched again; phase traces.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 120 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g1.sk1 > "$R/trace.log" 2>&1
timeout 60 kerntune trace --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8 >> "$R/trace.log" 2>&1
timeout 60 kerntune trace --shape 1536x1536x8192 --config sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 >> "$R/trace.log" 2>&1
grep -v "^ *cta" "$R/trace.log" | head -60
export KERNTUNE_DB="$R/kerntune.db"
kerntune cache import .carry/s3c2_measurements.csv 2>&1 | tail -1
SH="--suite foundation --shape 1x4096x4096 --shape 64x4096x4096"
for i in 1 2; do
  timeout 90 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:|geomean|copy" | cut -c1-34,35-80,124-200
done
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
