#!/usr/bin/env bash
# Session 11, call 6: the commit (serpentine K, trace clock): the gpu tier's multi-wave, cluster,
# pair and trace tests; the foundation suite tuned and benched twice; the decode suite tuned and
# benched; traces of the power-limited shapes' picks with the SM clock.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 230 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90PersistentWavesWalkKBothWays:GemmTraceTest.*:GemmCorrectness.Sm90ClustersWithOddTileRowsAndTails:GemmCorrectness.Sm90PairsAlongNOnRaggedShapes:GemmCorrectness.Sm90WritesFp32AndMixedOutputs' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$R/gpu_tests.log" | head -12
KERNTUNE_DB="$R/f.db" timeout 170 kerntune tune --suite foundation > "$R/ftune.log" 2> "$R/ftune_progress.log"
echo "foundation tuned rc $? at $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  KERNTUNE_DB="$R/f.db" timeout 50 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench$r.csv" > "$R/fbench$r.log" 2>&1
  echo "== foundation bench $r at $(( $(date +%s) - t0 )) s"; grep -E "^gemm|geometric" "$R/fbench$r.log" | awk '{print $1, $2, $(NF-1), $NF}'
done
KERNTUNE_DB="$R/f.db" kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
KERNTUNE_DB="$R/d.db" timeout 100 kerntune tune --suite decode > "$R/dtune.log" 2> "$R/dtune_progress.log"
echo "decode tuned rc $? at $(( $(date +%s) - t0 )) s"
KERNTUNE_DB="$R/d.db" timeout 40 kerntune bench --suite decode --rounds 8 --csv "$R/dbench.csv" > "$R/dbench.log" 2>&1
grep -E "^gemm" "$R/dbench.log" | awk '{print $1, $2, $(NF-2), $(NF-1)}'
KERNTUNE_DB="$R/d.db" kerntune cache export "$R/dmeasurements.csv" >/dev/null 2>&1
for spec in "1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1" "4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1" "8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"; do
  set -- $spec; timeout 60 kerntune trace --shape $1 --config $2 > "$R/trace_$1.log" 2>&1
  printf '%s ' $1; grep -E "CTAs, launch|main loop done|SM clock" "$R/trace_$1.log" | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e 'bench.*csv' -e measurements.csv -e 'bench.*log' -e gpu_tests.log -e tune.log | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
