#!/usr/bin/env bash
# Session 15, call 9: at the pieces-downward commit, the gpu tier's stream-K and shipped-config
# tests, then the foundation suite tuned once and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
F='GemmCorrectness.Sm90StreamKOnRaggedShapes:GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes'
timeout 240 dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | head
gzip "$R/gpu_tests.log"
KERNTUNE_DB="$R/f.db" timeout 170 kerntune tune --suite foundation > "$R/ftune.log" 2> "$R/ftune_progress.log"
echo "foundation tuned rc $? at $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  KERNTUNE_DB="$R/f.db" timeout 30 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench$rep.csv" > "$R/fbench$rep.log" 2>&1
  echo "foundation bench $rep rc $? at $(( $(date +%s) - t0 )) s"
done
KERNTUNE_DB="$R/f.db" kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
grep -h "geometric" "$R"/fbench*.log
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
