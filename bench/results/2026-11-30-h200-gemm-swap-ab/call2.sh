#!/usr/bin/env bash
# Session 4, call 2: does the flush kernel's shared-memory carveout cost the timed kernel a reconfiguration? Decode suite and two compute-bound shapes benched with the flush at the default and at max-shared carveout, interleaved; traces of the swab decode configs.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/kerntune.db"
timeout 100 stdbuf -oL kerntune tune --suite decode 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
timeout 30 kerntune tune --shape 2048x2048x2048 --config sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g1.sk1 >/dev/null 2>&1
timeout 30 kerntune tune --shape 1536x1536x8192 --config sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g8.sk1 >/dev/null 2>&1
echo "tune done at $(( $(date +%s) - t0 )) s"; grep -E "winner" "$R/tune.log"
SH="--suite decode --shape 2048x2048x2048 --shape 1536x1536x8192"
for i in 1 2; do
  for mode in default max; do
    if [ $mode = max ]; then export KT_EXPERIMENT_FLUSH_CARVEOUT=100; else unset KT_EXPERIMENT_FLUSH_CARVEOUT; fi
    timeout 60 kerntune bench $SH --rounds 6 --csv "$R/bench_${mode}_$i.csv" > "$R/bench_${mode}_$i.log" 2>&1
    echo "== flush carveout $mode run $i"; grep -v "id=" "$R/bench_${mode}_$i.log" | grep -E "gemm:" | cut -c1-200
  done
done
unset KT_EXPERIMENT_FLUSH_CARVEOUT
echo "bench done at $(( $(date +%s) - t0 )) s"
for mode in default max; do
  if [ $mode = max ]; then export KT_EXPERIMENT_FLUSH_CARVEOUT=100; else unset KT_EXPERIMENT_FLUSH_CARVEOUT; fi
  timeout 60 kerntune trace --shape 16x4096x4096 --config sm90.bm128.bn16.bk64.s8.c2.e0.clk2.g8.sk2.swab \
    --config sm90.bm64.bn16.bk64.s12.c1.e0.cl1.g8.sk1.swab > "$R/trace_$mode.log" 2>&1
  timeout 60 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn64.bk64.s12.c1.e0.clk2.g1.sk2 >> "$R/trace_$mode.log" 2>&1
  echo "== trace, flush carveout $mode"; grep -v "^ *cta" "$R/trace_$mode.log" | head -40
done
echo "all done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
