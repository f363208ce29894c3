#!/usr/bin/env bash
# Session 6, call 10 (at 946adcb, early first loads): gpu tests of the sm90 family; decode tuned, benched twice; a trace of 16 x 4096^2's pick.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
kerntune trace --shape 16x4096x4096 --config sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g1.sk1.swab > "$R/trace16.log" 2>&1
kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab > "$R/trace64.log" 2>&1
cat "$R/trace16.log" "$R/trace64.log" | head -40
export KERNTUNE_DB="$R/kerntune.db"
SH="--suite decode"
timeout 150 stdbuf -oL kerntune tune $SH 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"; grep -E "winner|runner" "$R/tune.log"
for i in 1 2; do
  timeout 40 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:" | cut -c1-200
done
kerntune explain --shape 64x4096x4096 > "$R/explain64.log" 2>&1
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
echo "decode done at $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r)
timeout 330 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90ShippedConfigs*:*Sm90SwapAb*:*Sm90MultiAtom*:*EveryOperandSet*:*RaggedShapesEveryDtypeBothLayoutsModelDefault*:*Sm90WritesFp32*:*Sm90NarrowTiles*:*GemmTrace*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -20
rm -f "$R"/*.db*
cd "$OUT" && rm -f r.tgz && tar czf r.tgz r && rm -rf r
