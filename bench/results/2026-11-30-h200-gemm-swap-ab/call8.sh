#!/usr/bin/env bash
# Session 4, call 8 (at the committed swap-AB code): the tuner's gpu tests, then the foundation suite tuned and benched once.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 60 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='ResumeAfterKillOnGpu*:RuntimeDispatch.TwoCandidate*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head
export KERNTUNE_DB="$R/kerntune.db"
timeout 95 stdbuf -oL kerntune tune --suite foundation 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r)
timeout 45 kerntune bench --suite foundation --rounds 6 --csv "$R/bench1.csv" > "$R/bench1.log" 2>&1
grep -v "id=" "$R/bench1.log" | grep -E "gemm:|geomean|mean" | cut -c1-200
echo "bench done at $(( $(date +%s) - t0 )) s"
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
rm -f "$R"/*.db*
cd "$OUT" && rm -f r.tgz && tar czf r.tgz r && rm -rf r
