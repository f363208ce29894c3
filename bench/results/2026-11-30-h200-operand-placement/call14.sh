#!/usr/bin/env bash
# Session 6, call 14 (d30d998, the rotation as one rotating_launch): the trace, runtime and operand-set gpu tests; decode tuned and benched once; a trace.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
timeout 60 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*GemmTrace*:RuntimeDispatch*:*EveryOperandSet*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure|PASSED" "$R/gpu_tests.log" | head -20
export KERNTUNE_DB="$R/kerntune.db"
timeout 120 stdbuf -oL kerntune tune --suite decode 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"
timeout 40 kerntune bench --suite decode --rounds 8 --csv "$R/bench1.csv" > "$R/bench1.log" 2>&1
grep -v "id=" "$R/bench1.log" | grep -E "gemm:" | cut -c1-200
kerntune trace --shape 16x4096x4096 --config sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g1.sk1.swab > "$R/trace16.log" 2>&1; head -3 "$R/trace16.log"
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
grep -E "^winner" "$R/measurements.csv" | cut -d, -f2,6,8
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
