#!/usr/bin/env bash
# Session 8, call 10: cuBLASLt's 512^2 x 32768 kernel (call 9: nvjet 128x64 split-K, clusters 1x2:
# in our orientation 64 x 128 tiles split 4, pairs sharing an operand, 28-29 us in the kernel)
# is our 128 x 64 sk4 cl2 by symmetry, which ran ~40 us. Traced as shipped and with the split as
# the fast unit index (SPLITFAST: consecutive clusters, packed into one GPC, take one tile's
# splits, which share no operand), against the 128 x 128 sk8 pick.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
tr() { # name variant shape configs...
  local name=$1 v=$2 shape=$3; shift 3
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  if [ $v = SHIPPED ]; then timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1
  else KT_DIAG=$v timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1; fi
  echo "== $name $v at $(( $(date +%s) - t0 )) s"; grep -E "launch|main loop|published|flags|C stored" "$R/${name}_$v.log" | cut -c1-160
}
for rep in 1 2; do
for v in SHIPPED KT_DIAG_SPLITFAST; do
  tr k32k_$rep $v 512x512x32768 sm90.bm128.bn64.bk64.s8.c2.e0.cl2.g1.sk4 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk4 \
    sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s6.c2.e0.cl2.g1.sk8
done; done
echo "done at $(( $(date +%s) - t0 )) s"
