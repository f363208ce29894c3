#!/usr/bin/env bash
# Fleet precompute on one GPU: record mode end to end (python/tests/test_record_gpu.py), a bundle served with the toolkit hidden (DriverOnlyServing), the foundation suite tuned by `fleet run` with one worker and with two sharing the GPU (--devices 0,0), their winners compared, merged, verified with a re-measured sample, and the dispatch overhead from the bundle.
# Run on the GPU machine from the repository root with dist/ installed: bash bench/fleet_acceptance.sh RESULTS_DIR
# Writes session.txt, record.txt, serve.txt, one.log, two.log, diff.txt, verify.txt, overhead.txt and the two shard databases (one.db, two.db) into RESULTS_DIR.
set -euo pipefail
out=${1:?usage: bash bench/fleet_acceptance.sh RESULTS_DIR}
source "$(dirname "$0")/session.sh"
export KERNTUNE_LIB=$(ls "$PWD"/dist/lib/libkerntune.so.*.*.* | head -1) KERNTUNE_CLI=$PWD/dist/bin/kerntune
PYTHONPATH=python python3 python/tests/test_record_gpu.py >"$out/record.txt" 2>&1
dist/libexec/kerntune/kt_tests_gpu --gtest_filter='DriverOnlyServing*' >"$out/serve.txt" 2>&1
manifest=$out/foundation.manifest
{
  echo "kerntune-manifest 1"
  echo "device h200"
  kerntune explain --suite foundation --json | python3 -c \
    'import json,sys; [print("gemm", p["problem"].split(":")[-1]) for p in json.load(sys.stdin)["problems"]]'
} >"$manifest"
kerntune fleet run --manifest "$manifest" --db "$out/one.db" --devices 0 2>"$out/one.log"
kerntune fleet run --manifest "$manifest" --db "$out/two.db" --devices 0,0 2>"$out/two.log"
kerntune fleet diff "$out/one.db" "$out/two.db" | tee "$out/diff.txt"
kerntune fleet merge --manifest "$manifest" --out "$out/bundle.db" "$out/one.db"
kerntune fleet verify --remeasure 5 "$out/bundle.db" | tee "$out/verify.txt"
kerntune bench --db "$out/bundle.db" --shape 4096x4096x4096 --shape 16x4096x4096 --dispatch-overhead \
  | tee "$out/overhead.txt"
rm -f "$out"/*.db-wal "$out"/*.db-shm "$out/bundle.db"
