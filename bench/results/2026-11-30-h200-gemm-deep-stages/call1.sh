#!/usr/bin/env bash
# call1: K-split consumers (cks). gpu tests, decode sweeps (cks vs the best earlier configs), a trace, the decode suite tuned and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 150 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90ConsumersSplitK*:*Sm90SwapAb*' > "$R/gpu_tests.log" 2>&1
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
sweep a16cks8 sm90.bm64.bn16.bk64.s8.c2.e0.cl1.g8.sk1.swab.cks $S16 $S1
sweep a16cks12 sm90.bm64.bn16.bk64.s12.c2.e0.cl1.g8.sk1.swab.cks $S16 $S1
sweep a16cks16 sm90.bm64.bn16.bk64.s16.c2.e0.cl1.g8.sk1.swab.cks $S16
sweep a16base sm90.bm128.bn16.bk64.s8.c2.e0.clk2.g8.sk2.swab $S16
sweep b64cks8 sm90.bm64.bn64.bk64.s8.c2.e0.cl1.g8.sk1.swab.cks $S64
sweep b64cks12 sm90.bm64.bn64.bk64.s12.c2.e0.cl1.g8.sk1.swab.cks $S64
sweep b32cks12 sm90.bm64.bn32.bk64.s12.c2.e0.cl1.g8.sk1.swab.cks $S64
sweep b64base sm90.bm64.bn64.bk64.s8.c1.e0.clk2.g8.sk2.swab $S64
sweep c128cks6 sm90.bm64.bn128.bk64.s6.c2.e0.cl1.g8.sk1.cks $SW
sweep c128swcks6 sm90.bm128.bn64.bk64.s6.c2.e0.cl1.g8.sk1.swab.cks $SW
sweep cbase sm90.bm64.bn128.bk64.s5.c1.e2.cl1.g8.sk1 $SW
echo "sweeps done at $(( $(date +%s) - t0 )) s"
timeout 40 kerntune trace --shape 16x4096x4096 --config sm90.bm64.bn16.bk64.s12.c2.e0.cl1.g8.sk1.swab.cks > "$R/trace.log" 2>&1
grep -v "^ *cta" "$R/trace.log" | head -30
(cd "$OUT" && tar czf r.tgz r)
export KERNTUNE_DB="$R/kerntune.db"
SH="--suite decode"
timeout 150 stdbuf -oL kerntune tune $SH 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"; grep -E "winner|runner" "$R/tune.log"
for i in 1 2; do
  timeout 40 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:" | cut -c1-200
done
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
cat "$R/sweep_err.log" 2>/dev/null | grep -i "error\|invalid" | head -10
rm -f "$R"/*.db*
cd "$OUT" && rm -f r.tgz && tar czf r.tgz r && rm -rf r
