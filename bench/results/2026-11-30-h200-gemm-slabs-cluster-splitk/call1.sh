#!/usr/bin/env bash
# Session 3, call 1: cluster split-K correctness; 512^2 x 32768 and 1536^2 x 8192 config sweeps; traces.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 240 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90ClusterSplitK*' > "$R/gpu_clk.log" 2>&1
echo "clk test rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|passed|not bitwise" "$R/gpu_clk.log" | head -20
timeout 120 kerntune trace --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s4.c2.e0.clk8.g8.sk8 \
  --config sm90.bm128.bn64.bk64.s6.c2.e0.clk4.g8.sk4 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8 > "$R/trace.log" 2>&1
timeout 60 kerntune trace --shape 1536x1536x8192 --config sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g8.sk1 \
  --config sm90.bm128.bn144.bk64.s5.c2.e0.cl1.g8.sk1 >> "$R/trace.log" 2>&1
cat "$R/trace.log" | grep -v "^ *cta" | head -80
echo "traces done at $(( $(date +%s) - t0 )) s"
sweep() {  # name config shapes...
  local name=$1 cfg=$2; shift 2
  export KERNTUNE_DB="$R/$name.db"
  local args=()
  for s in "$@"; do timeout 60 kerntune tune --shape "$s" --config "$cfg" >/dev/null 2>>"$R/sweep_err.log"; args+=(--shape "$s"); done
  timeout 60 kerntune bench "${args[@]}" --rounds 6 --csv "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "== $name $cfg"; grep -v "id=" "$R/$name.log" | grep "gemm:" | cut -c1-200
}
S=512x512x32768
sweep k_cl2s4 sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk8 $S
sweep k_cl1s5 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8 $S
sweep k_clk8s4 sm90.bm128.bn128.bk64.s4.c2.e0.clk8.g8.sk8 $S
sweep k_clk8s6 sm90.bm128.bn128.bk64.s6.c2.e0.clk8.g8.sk8 $S
sweep k_64clk4 sm90.bm128.bn64.bk64.s6.c2.e0.clk4.g8.sk4 $S
sweep k_64clk4s8 sm90.bm128.bn64.bk64.s8.c2.e0.clk4.g8.sk4 $S
sweep k_c1clk4 sm90.bm64.bn128.bk64.s6.c1.e0.clk4.g8.sk4 $S
sweep k_clk8s4_64 sm90.bm64.bn128.bk64.s6.c1.e0.clk8.g8.sk8 $S
echo "512 sweeps done at $(( $(date +%s) - t0 )) s"
S=1536x1536x8192
sweep w_e0s5 sm90.bm128.bn144.bk64.s5.c2.e0.cl1.g8.sk1 $S
sweep w_e2s5 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g8.sk1 $S
sweep w_e2s4 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 $S
sweep w_e2s4cl2 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1 $S
sweep w_e2s5cl2 sm90.bm128.bn144.bk64.s5.c2.e2.cl2.g8.sk1 $S
sweep w_e1s5cl2 sm90.bm128.bn144.bk64.s5.c2.e1.cl2.g8.sk1 $S
sweep w_e0s5cl2 sm90.bm128.bn144.bk64.s5.c2.e0.cl2.g8.sk1 $S
echo "1536 sweeps done at $(( $(date +%s) - t0 )) s"
S=64x4096x4096
sweep d_32e2 sm90.bm64.bn32.bk64.s12.c1.e2.cl1.g8.sk1 $S
sweep d_32e0 sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g8.sk1 $S
sweep d_32clk2 sm90.bm64.bn32.bk64.s12.c1.e0.clk2.g8.sk2 $S
sweep d_64clk4 sm90.bm64.bn64.bk64.s12.c1.e0.clk4.g8.sk4 $S
sweep d_128clk4 sm90.bm64.bn128.bk64.s8.c1.e0.clk4.g8.sk4 $S
echo "all done at $(( $(date +%s) - t0 )) s"
cat "$R/sweep_err.log" 2>/dev/null | grep -iv "^$" | head -20
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
