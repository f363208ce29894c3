#!/usr/bin/env bash
# Session 3, call 10: up to three local rounds: decode suite + the two wave/split shapes tuned and benched twice; the resume-after-kill gpu test.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/kerntune.db"
SH="--suite decode --shape 512x512x32768 --shape 1536x1536x8192"
timeout 100 stdbuf -oL kerntune tune $SH 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 40 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:|copy" | cut -c1-34,35-80,124-200
done
kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
echo "bench done at $(( $(date +%s) - t0 )) s"
timeout 60 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='ResumeAfterKillOnGpu*:RuntimeDispatch.TwoCandidate*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
