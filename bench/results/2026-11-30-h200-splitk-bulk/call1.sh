#!/usr/bin/env bash
# Session 7, call 1: distributed split-K by bulk copies. Traces of the split-K tiles (phases against
# the last session's), short sweeps + bench against cuBLASLt at 512^2 x 32768 and 64 x 4096^2, then
# the split-K gpu tests.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 150 kerntune trace --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8 \
  sm90.bm128.bn64.bk64.s6.c2.e0.cl1.g8.sk4 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk4 > "$R/trace.log" 2>&1
timeout 60 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk4 >> "$R/trace.log" 2>&1
echo "traces at $(( $(date +%s) - t0 )) s"; cat "$R/trace.log" | cut -c1-150
sweep() {  # name shape configs...
  local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  KERNTUNE_DB="$R/$name.db" timeout 120 kerntune tune --shape "$shape" "${args[@]}" 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
  KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
  grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,7,8,15 | sort -t, -k3 -n
  KERNTUNE_DB="$R/$name.db" timeout 40 kerntune bench --shape "$shape" --rounds 8 --csv "$R/${name}_bench.csv" > "$R/${name}_bench.log" 2>&1
  grep -E "gemm:" "$R/${name}_bench.log" | grep -v "id=" | cut -c1-200
  echo "$name done at $(( $(date +%s) - t0 )) s"
}
sweep k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8 \
  sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk8 sm90.bm128.bn64.bk64.s6.c2.e0.cl1.g8.sk4 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g8.sk8 \
  sm90.bm64.bn128.bk64.s6.c1.e0.cl1.g8.sk4 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g8.sk8 sm90.bm128.bn64.bk64.s6.c2.e0.cl2.g8.sk4 \
  sm90.bm128.bn256.bk64.s3.c2.e0.cl1.g8.sk16 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk4
sweep m64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk4 \
  sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk2.swab sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk2 sm90.bm64.bn128.bk128.s4.c1.e0.cl1.g8.sk4 \
  sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk2.swab sm90.bm128.bn64.bk128.s4.c2.e0.cl1.g8.sk4.swab
timeout 330 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90SplitK*:*Sm90ClusterSplitK*:*SwapAb*:*MultiAtom*:GemmTraceTest.*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -20
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
