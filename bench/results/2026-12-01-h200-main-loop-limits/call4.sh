#!/usr/bin/env bash
# Session 9, call 4: what the split-K partial sums would cost as bulk reductions in L2
# (cp.reduce.async.bulk .add.f32) instead of bulk stores: REDADD (every split adds into split
# 0's slot: the contended adds of a one-buffer design; results wrong, timing only) and
# REDADD_OWN (adds into each split's own slot). The "published" phase is the measure.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
for rep in 1 2; do for v in SHIPPED KT_DIAG_REDADD KT_DIAG_REDADD_OWN; do
  args=(--config sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8)
  if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --shape 512x512x32768 "${args[@]}" > "$R/k32k_${v}_$rep.log" 2>&1
  else KT_DIAG=$v timeout 100 $K trace --shape 512x512x32768 "${args[@]}" > "$R/k32k_${v}_$rep.log" 2>&1; fi
  echo "== $v $rep at $(( $(date +%s) - t0 )) s"
  grep -E "CTAs, launch|main loop|published|flags ready|C stored" "$R/k32k_${v}_$rep.log" | sed -E 's/gemm:bf16:bf16:nt://; s/\(.*//' | cut -c1-110
done; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
