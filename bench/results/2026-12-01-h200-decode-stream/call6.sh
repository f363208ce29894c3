#!/usr/bin/env bash
# Session 14, call 6: the TMA-store epilogue's first slab, marked (KT_DIAG_EPI_MARKS): "published"
# after the slot barrier, "flags ready" after the staging (F2FP + STSM), "epoch read" after the
# fence, the second barrier and the TMA store's issue; "C stored" after the last slab.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
for rep in 1 2; do
  for sc in 2048x2048x2048:sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1 4096x4096x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 1536x1536x8192:sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1; do
    s=${sc%%:*}; c=${sc#*:}
    KT_DIAG=KT_DIAG_EPI_MARKS timeout 60 kerntune trace --reps 30 --shape $s --config $c > "$R/${s}_$rep.log" 2>&1
    printf '%s %s ' $s $rep; grep -E "launch|main loop done|published|flags ready|C stored|epoch read" "$R/${s}_$rep.log" | tr -s ' ' | sed -E 's/gemm:[^ ]+ sm90[^:]+: //; s/ \(us after.*//' | cut -c1-60 | tr '\n' '|'; echo
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
