#!/usr/bin/env bash
# call5: stages four swizzle atoms deep (bk256). gpu test, decode sweeps against bk128, traces.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 100 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90MultiAtomStages*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head -20
sweep() {  # name config shapes...
  local name=$1 cfg=$2; shift 2
  export KERNTUNE_DB="$R/$name.db"
  local args=()
  for s in "$@"; do timeout 60 kerntune tune --shape "$s" --config "$cfg" >/dev/null 2>>"$R/sweep_err.log"; args+=(--shape "$s"); done
  timeout 60 kerntune bench "${args[@]}" --rounds 8 --csv "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "== $name $cfg"; grep -v "id=" "$R/$name.log" | grep -E "gemm:" | cut -c1-34,80-200
}
S16=16x4096x4096; S64=64x4096x4096; S1=1x4096x4096
sweep a256 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab $S16 $S1
sweep a128 sm90.bm64.bn16.bk128.s10.c1.e0.cl1.g8.sk1.swab $S16 $S1
sweep b256sw sm90.bm64.bn32.bk256.s4.c1.e0.cl1.g1.sk1.swab $S64
sweep b256 sm90.bm64.bn32.bk256.s4.c1.e0.cl1.g1.sk1 $S64
sweep b256w64 sm90.bm64.bn64.bk256.s3.c1.e0.cl1.g8.sk1.swab $S64
sweep b128 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1 $S64
echo "sweeps done at $(( $(date +%s) - t0 )) s"
timeout 40 kerntune trace --shape 16x4096x4096 --config sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab > "$R/trace.log" 2>&1
timeout 40 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn32.bk256.s4.c1.e0.cl1.g1.sk1 >> "$R/trace.log" 2>&1
timeout 40 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1 >> "$R/trace.log" 2>&1
grep -v "^ *cta" "$R/trace.log" | head -40
echo "all done at $(( $(date +%s) - t0 )) s"
cat "$R/sweep_err.log" 2>/dev/null | grep -i "error\|invalid" | head -10
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
