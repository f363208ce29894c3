#!/usr/bin/env bash
# Session 7, call 3: the partial-sum slot prefetched into L2 by the producer after its last loads
# (uncommitted experiment on top of call 1's commit): traces and a short sweep at 512^2 x 32768.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
timeout 150 kerntune trace --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8 \
  sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8 sm90.bm128.bn64.bk64.s6.c2.e0.cl1.g8.sk4 > "$R/trace.log" 2>&1
timeout 60 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk4 >> "$R/trace.log" 2>&1
echo "traces at $(( $(date +%s) - t0 )) s"; cat "$R/trace.log" | cut -c1-150
name=k32k; shape=512x512x32768
KERNTUNE_DB="$R/$name.db" timeout 120 kerntune tune --shape $shape --config sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk8 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,7,8,15 | sort -t, -k3 -n
KERNTUNE_DB="$R/$name.db" timeout 40 kerntune bench --shape "$shape" --rounds 8 --csv "$R/${name}_bench.csv" > "$R/${name}_bench.log" 2>&1
grep -E "gemm:" "$R/${name}_bench.log" | grep -v "id=" | cut -c1-200
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
