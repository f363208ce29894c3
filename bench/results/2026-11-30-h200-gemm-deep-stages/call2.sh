#!/usr/bin/env bash
# call2: stages two swizzle atoms deep (bk128). gpu tests, decode sweeps, traces.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90TwoAtomStages*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head -20
sweep() {  # name config shapes...
  local name=$1 cfg=$2; shift 2
  export KERNTUNE_DB="$R/$name.db"
  local args=()
  for s in "$@"; do timeout 60 kerntune tune --shape "$s" --config "$cfg" >/dev/null 2>>"$R/sweep_err.log"; args+=(--shape "$s"); done
  timeout 60 kerntune bench "${args[@]}" --rounds 6 --csv "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "== $name $cfg"; grep -v "id=" "$R/$name.log" | grep -E "gemm:" | cut -c1-34,80-200
}
S16=16x4096x4096; S64=64x4096x4096; S1=1x4096x4096; SW=64x14336x4096
sweep a6 sm90.bm64.bn16.bk128.s6.c1.e0.cl1.g8.sk1.swab $S16 $S1
sweep a8 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g8.sk1.swab $S16
sweep a8cks sm90.bm64.bn16.bk128.s8.c2.e0.cl1.g8.sk1.swab.cks $S16
sweep a6clk2 sm90.bm64.bn16.bk128.s6.c1.e0.clk2.g8.sk2.swab $S16
sweep abase sm90.bm64.bn16.bk64.s8.c1.e0.clk2.g8.sk2.swab $S16
sweep b64 sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk1.swab $S64
sweep b32 sm90.bm64.bn32.bk128.s6.c1.e0.cl1.g8.sk1.swab $S64
sweep b64clk2 sm90.bm64.bn64.bk128.s4.c1.e0.clk2.g8.sk2.swab $S64
sweep c128 sm90.bm64.bn128.bk128.s3.c1.e2.cl1.g8.sk1 $SW
sweep c128sw sm90.bm128.bn64.bk128.s4.c2.e0.cl1.g8.sk1.swab $SW
sweep c64sw sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk1.swab $SW
echo "sweeps done at $(( $(date +%s) - t0 )) s"
timeout 40 kerntune trace --shape 16x4096x4096 --config sm90.bm64.bn16.bk128.s6.c1.e0.cl1.g8.sk1.swab > "$R/trace.log" 2>&1
timeout 40 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk1.swab >> "$R/trace.log" 2>&1
grep -v "^ *cta" "$R/trace.log" | head -30
echo "done at $(( $(date +%s) - t0 )) s"
cat "$R/sweep_err.log" 2>/dev/null | grep -i "error\|invalid" | head -10
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
