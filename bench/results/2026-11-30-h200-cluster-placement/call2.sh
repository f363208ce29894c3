#!/usr/bin/env bash
# Session 8, call 2: cluster pairs run slower with neither multicast nor remote releases (call 1):
# the cluster launch itself. Per-CTA dumps (SM id, first stage, main loop done, C stored) of cl1,
# cl2 without multicast or remote releases (LOCAL), and the same with cl1's unit mapping (M2:
# CTA b takes unit b, so only the cluster launch's placement differs from cl1).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
tr() { # name variant shape config
  local name=$1 v=$2 shape=$3 c=$4
  if [ $v = SHIPPED ]; then KT_DIAG_DUMP=1 timeout 100 $K trace --shape "$shape" --config $c > "$R/${name}_$v.log" 2>&1
  else KT_DIAG_DUMP=1 KT_DIAG=$v timeout 100 $K trace --shape "$shape" --config $c > "$R/${name}_$v.log" 2>&1; fi
  echo "== $name $v at $(( $(date +%s) - t0 )) s"; grep -E "launch|main loop|first stage|C stored" "$R/${name}_$v.log" | cut -c1-160
}
for rep in 1 2; do
tr k32k_cl1_$rep SHIPPED 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8
tr k32k_cl2_$rep KT_DIAG_LOCAL 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8
tr k32k_cl2_$rep KT_DIAG_M2 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8
tr k32k_cl2_$rep SHIPPED 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8
done
tr s1536_cl1 SHIPPED 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
tr s1536_cl2 KT_DIAG_LOCAL 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1
tr s1536_cl2 KT_DIAG_M2 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1
echo "done at $(( $(date +%s) - t0 )) s"
