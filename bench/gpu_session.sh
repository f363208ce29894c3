#!/usr/bin/env bash
# One GPU session on the device machine, in steps that each fit one 10-minute call:
#   tests: the gpu test tier from the installed tree, its full log kept. On the H200 the whole
#          tier takes ~9.5 minutes (GemmCorrectness 7.7, the rest ~1.7), so run it as two calls:
#          GTEST_FILTER='GemmCorrectness.*' and GTEST_FILTER='-GemmCorrectness.*';
#   perf:  tune a GEMM suite, bench it beside cuBLASLt, then the dispatch overhead.
# Expects the install tree in dist/ (built and installed with -DKT_INSTALL_TESTS=ON) and writes
# logs, CSV and the database under $OUT.
#   usage: bash bench/gpu_session.sh tests            (GTEST_FILTER narrows it)
#          bash bench/gpu_session.sh perf [suite] [tune flags...]
set -uo pipefail
phase=${1:-tests}
shift || true
OUT=${OUT:-/tmp/kt_out}
mkdir -p "$OUT"
export PATH="$PWD/dist/bin:$PATH"
export KERNTUNE_DB="$OUT/kerntune.db"
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(cat dist/COMMIT 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
  kerntune info
} 2>&1 | tee "$OUT/session.log"

if [ "$phase" = tests ]; then
  # The installed tests start the worker and the CLI installed beside them
  # (tests/support/isolation.hpp); without them every isolation test would fail alike.
  for f in dist/libexec/kerntune/kt_tests_gpu dist/libexec/kerntune/kerntune-worker dist/bin/kerntune; do
    [ -x "$f" ] || { echo "missing $f: install with -DKT_INSTALL_TESTS=ON" | tee "$OUT/gpu_tests.log"; exit 1; }
  done
  # Line-buffered and one line per finished test, so a run stopped by the time limit (a hung
  # kernel) still leaves the tests it finished and the one it was in.
  timeout 570 stdbuf -oL dist/libexec/kerntune/kt_tests_gpu --gtest_filter="${GTEST_FILTER:-*}" \
    >"$OUT/gpu_tests.log" 2>&1
  status=$?
  echo "kt_tests_gpu exit status: $status (124: past the time limit)" >>"$OUT/gpu_tests.log"
  tail -60 "$OUT/gpu_tests.log"
  exit $status
fi
[ "$phase" = perf ] || { echo "usage: bash bench/gpu_session.sh tests | perf [suite] [tune flags...]"; exit 2; }
suite=${1:-foundation}
shift || true
if [ ! -e /usr/local/cuda/lib64/libcublasLt.so.13 ]; then
  lt=$(find / -name 'libcublasLt.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$lt" ] && export KERNTUNE_CUBLASLT="$lt"
fi
start=$(date +%s)
timeout 280 kerntune tune --suite "$suite" "$@" 2>"$OUT/tune_progress.log" | tee "$OUT/tune.log"
echo "tune wall seconds: $(( $(date +%s) - start ))" | tee -a "$OUT/tune.log"
timeout 130 kerntune bench --suite "$suite" --csv "$OUT/bench.csv" 2>&1 | tee "$OUT/bench.log"
timeout 25 kerntune bench --dispatch-overhead --shape 4096x4096x4096 --shape 2048x2048x2048 2>&1 | tee -a "$OUT/bench.log"
# Why each winner won: the model's figures beside the measured winner and runner-up.
timeout 30 kerntune explain --suite "$suite" >"$OUT/explain.txt" 2>&1
kerntune cache export "$OUT/measurements.csv" >/dev/null 2>&1
# The database with its cubins can exceed what comes back; keep the CSV and a small summary.
kerntune cache ls > "$OUT/cache_ls.txt" 2>&1
rm -f "$OUT/kerntune.db" "$OUT/kerntune.db-wal" "$OUT/kerntune.db-shm"
