#!/usr/bin/env bash
# Session 10, call 8: with the producer tail, the pairs' main loop at 1536^2 is still ~2 us slow
# (call 7) with a __syncthreads() at exit. Is any CTA barrier at exit the cost (ptxas's code for
# a kernel that must reconverge there)? EXIT_NONE: no barrier at exit; EXIT_NA: the non-aligned
# barrier.sync.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
show() { printf '%-10s ' $1; grep -E "CTAs, launch|first stage full|main loop done|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for spec in "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1" \
              "s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g1.sk1 sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g1.sk1" \
              "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab"; do
    set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
    env -u KT_DIAG timeout 60 $K trace --per-cta --shape $shape --config $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    env -u KT_DIAG timeout 60 $K trace --per-cta --shape $shape --config $c2 > "$R/${name}_SYNC_$rep.log" 2>&1
    KT_DIAG=KT_DIAG_EXIT_NONE timeout 60 $K trace --per-cta --shape $shape --config $c2 > "$R/${name}_NONE_$rep.log" 2>&1
    KT_DIAG=KT_DIAG_EXIT_NA timeout 60 $K trace --per-cta --shape $shape --config $c2 > "$R/${name}_NA_$rep.log" 2>&1
    for f in cl1 SYNC NONE NA; do show $f "$R/${name}_${f}_$rep.log"; done
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
