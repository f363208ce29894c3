#!/usr/bin/env bash
# Session 6, call 6 (protocol 3): gpu tests of the change; the decode suite tuned, benched twice, and one pick traced.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 150 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*EveryOperandSet*:*RaggedShapesEveryDtypeBothLayoutsModelDefault*:RuntimeDispatch*:*Trace*:*Sm90SwapAb*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -20
export KERNTUNE_DB="$R/kerntune.db"
SH="--suite decode"
timeout 150 stdbuf -oL kerntune tune $SH 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"; grep -E "winner|runner" "$R/tune.log"
for i in 1 2; do
  timeout 40 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:" | cut -c1-200
done
kerntune explain --shape 1x4096x4096 > "$R/explain1.log" 2>&1
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
grep -E "^winner" "$R/measurements.csv" | cut -d, -f2,6,8
echo "all done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
