#!/usr/bin/env bash
# Session 9, call 6: the 0.8-0.9 us from a CTA's entry to its first TMA load. Variants of the
# prologue (non-cluster kernels): FENCE_PROXY (fence.proxy.async.shared::cta after the barrier
# inits instead of fence.mbarrier_init.release.cluster), NOFENCE (timing only), PARAM_TOUCH
# (warp 1 reads every 64-byte line of the parameter block at once), BOTH.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
run() { local v=$1 rep=$2
  for spec in "64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" "16x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
              "64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1" "2048x2048x2048 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g1.sk1"; do
    set -- $spec
    if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --shape $1 --config $2 >> "$R/${v}_$rep.log" 2>&1
    else KT_DIAG=$v timeout 100 $K trace --shape $1 --config $2 >> "$R/${v}_$rep.log" 2>&1; fi
  done
  echo "== $v $rep at $(( $(date +%s) - t0 )) s"
  grep -E "CTAs, launch|first load|first stage" "$R/${v}_$rep.log" | sed -E 's/gemm:bf16:bf16:nt://; s/ sm90.*launch/ launch/; s/\(.*//' | cut -c1-90 | paste - - -
}
for rep in 1 2; do for v in SHIPPED KT_DIAG_FENCE_PROXY KT_DIAG_NOFENCE KT_DIAG_PARAM_TOUCH KT_DIAG_BOTH; do run $v $rep; done; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
