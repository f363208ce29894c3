#!/usr/bin/env bash
# Session 6, call 7 (protocol 3): does the bench time decode kernels before the GPU's clocks are up? Then the foundation suite tuned and benched.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
sleep 2
.carry/diag/diag gemm:bf16:bf16:nt:1x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g1.sk1.swab smallm.bm8.bn16.bk128.wn16.wk8.sk1 > "$R/diag_clock.log" 2>&1
cut -c1-400 "$R/diag_clock.log"
echo "diag done at $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r)
export KERNTUNE_DB="$R/foundation.db"
timeout 240 stdbuf -oL kerntune tune --suite foundation 2>"$R/ftune_progress.log" | grep -v rejected > "$R/ftune.log"
echo "ftune rc=$? done at $(( $(date +%s) - t0 )) s"
timeout 60 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench.csv" > "$R/fbench.log" 2>&1
grep -v "id=" "$R/fbench.log" | grep -E "gemm:|geomean|mean" | cut -c1-200
kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
echo "all done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
cd "$OUT" && rm -f r.tgz && tar czf r.tgz r && rm -rf r
