#!/usr/bin/env bash
# Session 14, call 4: where the TMA-store epilogue's ~1.3 us go (main loop done -> stores issued,
# 128 x 256 tile, four 64-column slabs, two slots a consumer). Diagnostics: without the staging
# (KT_DIAG_EPI_NOSTAGE), without the proxy fence (NOFENCE), without the TMA store (NOTMA), with
# the C map prefetched at the last k-tile (CMAP); and four slots (e4, no slot waits). Traces
# alternated twice at 2048^3 (one wave) and 4096^3.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
show() { printf '%-40s ' "$1"; grep -E "CTAs, launch|main loop done|C stored" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ sm90[^:]+: //' | tr -s ' ' | sed -E 's/ \(us after.*//' | cut -c1-80 | tr '\n' '|'; echo; }
run() {  # tag shape config diag rep
  KT_DIAG=$4 timeout 60 kerntune trace --reps 30 --shape $2 --config $3 > "$R/$1_$4_$5.log" 2>&1
  show "$1 $4 $5" "$R/$1_$4_$5.log"
}
for rep in 1 2; do
  for d in KT_DIAG_NONE KT_DIAG_EPI_NOSTAGE KT_DIAG_EPI_NOFENCE KT_DIAG_EPI_NOTMA KT_DIAG_EPI_CMAP; do
    run s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1 $d $rep
    run s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 $d $rep
  done
  run s2048e4 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1 KT_DIAG_NONE $rep
  run s4096e4 4096x4096x4096 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1 KT_DIAG_NONE $rep
  run s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 KT_DIAG_NONE $rep
  run s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 KT_DIAG_EPI_NOFENCE $rep
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
