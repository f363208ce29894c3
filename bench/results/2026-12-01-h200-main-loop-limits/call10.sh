#!/usr/bin/env bash
# Session 9, call 10: `kerntune trace --per-cta` (each CTA's SM, from the traced build) tested
# and used on the placements of session 8; then the foundation and decode suites tuned and
# benched at this session's code (kernels unchanged but for the trace-only SM stamp).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 120 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmTraceTest.*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$R/gpu_tests.log" | head -8
timeout 100 kerntune trace --per-cta --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 \
  --config sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 > "$R/trace_per_cta_512.log" 2>&1
echo "trace rc $? at $(( $(date +%s) - t0 )) s"; grep -E "CTAs, launch|^  +(cta|0|1|2|3|8|9|10|11) " "$R/trace_per_cta_512.log" | head -24
KERNTUNE_DB="$R/f.db" timeout 240 kerntune tune --suite foundation > "$R/ftune.log" 2> "$R/ftune_progress.log"
echo "foundation tuned rc $? at $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  KERNTUNE_DB="$R/f.db" timeout 120 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench$r.csv" > "$R/fbench$r.log" 2>&1
  echo "== foundation bench $r at $(( $(date +%s) - t0 )) s"; grep -E "^gemm|geometric" "$R/fbench$r.log" | awk '{print $1, $2, $(NF-1), $NF}'
done
KERNTUNE_DB="$R/d.db" timeout 120 kerntune tune --suite decode > "$R/dtune.log" 2> "$R/dtune_progress.log"
KERNTUNE_DB="$R/d.db" timeout 90 kerntune bench --suite decode --rounds 8 --csv "$R/dbench.csv" > "$R/dbench.log" 2>&1
echo "== decode at $(( $(date +%s) - t0 )) s"; grep -E "^gemm" "$R/dbench.log" | awk '{print $1, $2, $(NF-2), $(NF-1)}'
KERNTUNE_DB="$R/f.db" kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
KERNTUNE_DB="$R/d.db" kerntune cache export "$R/dmeasurements.csv" >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
