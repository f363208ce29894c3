#!/usr/bin/env bash
# Session 4, call 3: barrier inits spread over warp 0's lanes (one fence); rings up to 24 stages: decode sweeps of deep unsplit swap-AB rings, traces, correctness of the swab/cluster/split-K tests.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
sweep() {  # name config shapes...
  local name=$1 cfg=$2; shift 2
  export KERNTUNE_DB="$R/$name.db"
  local args=()
  for s in "$@"; do timeout 60 kerntune tune --shape "$s" --config "$cfg" >/dev/null 2>>"$R/sweep_err.log"; args+=(--shape "$s"); done
  timeout 60 kerntune bench "${args[@]}" --rounds 6 --csv "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "== $name $cfg"; grep -v "id=" "$R/$name.log" | grep -E "gemm:" | cut -c1-34,80-200
}
S16=16x4096x4096; S64=64x4096x4096; S1=1x4096x4096; SW=64x14336x4096
sweep a16s8 sm90.bm64.bn16.bk64.s8.c1.e0.cl1.g8.sk1.swab $S16
sweep a16s12 sm90.bm64.bn16.bk64.s12.c1.e0.cl1.g8.sk1.swab $S16
sweep a16s16 sm90.bm64.bn16.bk64.s16.c1.e0.cl1.g8.sk1.swab $S16 $S1
sweep a16s22 sm90.bm64.bn16.bk64.s22.c1.e0.cl1.g8.sk1.swab $S16 $S1
sweep a128x16s11 sm90.bm128.bn16.bk64.s11.c2.e0.cl1.g8.sk1.swab $S16
sweep a128x16clk2s8 sm90.bm128.bn16.bk64.s8.c2.e0.clk2.g8.sk2.swab $S16
sweep b64s13 sm90.bm64.bn64.bk64.s13.c1.e0.cl1.g8.sk1.swab $S64
sweep b32s16 sm90.bm64.bn32.bk64.s16.c1.e0.cl1.g8.sk1.swab $S64
sweep b64clk2s8 sm90.bm64.bn64.bk64.s8.c1.e0.clk2.g8.sk2.swab $S64
sweep b32s16plain sm90.bm64.bn32.bk64.s16.c1.e0.cl1.g8.sk1 $S64
sweep c128x64s10 sm90.bm128.bn64.bk64.s10.c2.e0.cl1.g8.sk1.swab $SW
sweep c64s13 sm90.bm64.bn64.bk64.s13.c1.e0.cl1.g8.sk1.swab $SW
echo "sweeps done at $(( $(date +%s) - t0 )) s"
timeout 60 kerntune trace --shape 16x4096x4096 --config sm90.bm64.bn16.bk64.s22.c1.e0.cl1.g8.sk1.swab \
  --config sm90.bm64.bn16.bk64.s12.c1.e0.cl1.g8.sk1.swab > "$R/trace.log" 2>&1
timeout 60 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn64.bk64.s13.c1.e0.cl1.g8.sk1.swab >> "$R/trace.log" 2>&1
grep -v "^ *cta" "$R/trace.log" | head -40
echo "traces done at $(( $(date +%s) - t0 )) s"
timeout 300 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90SwapAb*:GemmCorrectness.Sm90ClustersWithOddTileRowsAndTails:GemmCorrectness.Sm90ClusterSplitK*:GemmCorrectness.Sm90SplitKRepeated*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head -20
cat "$R/sweep_err.log" 2>/dev/null | grep -i "error\|invalid" | head -10
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
