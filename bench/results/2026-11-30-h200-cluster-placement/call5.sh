#!/usr/bin/env bash
# Session 8, call 5 (92aef50, the last session's final commit, whose stripe-barrier change was
# only compile-checked): the split-K gpu tests; then the four short shapes' known winners tuned
# (restricted) and benched beside cuBLASLt with the SM clock and power sampled every 100 ms.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv; } > "$R/session.log" 2>&1
timeout 330 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90SplitK*:GemmCorrectness.Sm90ClusterSplitK*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | tail -8
export KERNTUNE_DB="$R/f.db"
tune() { local shape=$1; shift; local args=(); for c in "$@"; do args+=(--config "$c"); done
  timeout 120 kerntune tune --shape "$shape" "${args[@]}" >> "$R/tune.log" 2>>"$R/tune_progress.log"; }
tune 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn256.bk64.s3.c2.e2.cl2.g8.sk1
tune 4100x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1
tune 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g1.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
tune 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8
echo "tuned at $(( $(date +%s) - t0 )) s"; grep -v rejected "$R/tune.log" | tail -8
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 100 > "$R/clocks.csv" 2>&1 &
SMI=$!
for s in 8192x8192x8192 4100x4096x4096 1536x1536x8192 512x512x32768; do
  echo "bench $s start $(date -u +%H:%M:%S.%N)" >> "$R/bench_times.log"
  kerntune bench --shape $s --rounds 8 --csv "$R/bench.csv" > "$R/bench_$s.log" 2>&1
  echo "bench $s end $(date -u +%H:%M:%S.%N)" >> "$R/bench_times.log"
done
kill $SMI
cut -d, -f1,5,7,8,10,11,13 "$R/bench.csv"
echo "done at $(( $(date +%s) - t0 )) s"
