#!/usr/bin/env bash
# Session 13, call 5: the model's wgmma factor keyed on N (d208fa5): the model-default ragged test;
# the foundation suite tuned once and benched twice, the decode suite tuned and benched, at the commit.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 230 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault' > "$R/gpu_tests.log" 2>&1
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
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e 'bench.*csv' -e measurements.csv -e 'bench.*log' -e gpu_tests.log -e tune.log | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
