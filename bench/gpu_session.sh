#!/usr/bin/env bash
# One GPU session on the device machine: the gpu test tier, then tune and bench a GEMM suite
# beside cuBLASLt, then the dispatch overhead. Expects the install tree in dist/ (built and
# installed here with -DKT_INSTALL_TESTS=ON) and writes logs, CSV and the database under $OUT.
#   usage: bash bench/gpu_session.sh [suite] [tune flags...]
set -uo pipefail
suite=${1:-foundation}
shift || true
OUT=${OUT:-/tmp/kt_out}
mkdir -p "$OUT"
export PATH="$PWD/dist/bin:$PATH"
export KERNTUNE_DB="$OUT/kerntune.db"
if [ ! -e /usr/local/cuda/lib64/libcublasLt.so.13 ]; then
  lt=$(find / -name 'libcublasLt.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$lt" ] && export KERNTUNE_CUBLASLT="$lt"
fi
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(cat dist/COMMIT 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
  kerntune info
} 2>&1 | tee "$OUT/session.log"

if [ -x dist/libexec/kerntune/kt_tests_gpu ]; then
  timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_brief=1 2>&1 | tail -60 | tee "$OUT/gpu_tests.log"
fi
start=$(date +%s)
timeout 280 kerntune tune --suite "$suite" "$@" 2>"$OUT/tune_progress.log" | tee "$OUT/tune.log"
echo "tune wall seconds: $(( $(date +%s) - start ))" | tee -a "$OUT/tune.log"
timeout 130 kerntune bench --suite "$suite" --csv "$OUT/bench.csv" 2>&1 | tee "$OUT/bench.log"
timeout 25 kerntune bench --dispatch-overhead --shape 4096x4096x4096 --shape 2048x2048x2048 2>&1 | tee -a "$OUT/bench.log"
kerntune cache export "$OUT/measurements.csv" >/dev/null 2>&1
# The database with its cubins can exceed what comes back; keep the CSV and a small summary.
kerntune cache ls > "$OUT/cache_ls.txt" 2>&1
rm -f "$OUT/kerntune.db" "$OUT/kerntune.db-wal" "$OUT/kerntune.db-shm"
