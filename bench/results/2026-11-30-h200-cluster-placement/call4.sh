#!/usr/bin/env bash
# Session 8, call 4: at 512^2 x 32768 (8 splits of 16 tiles) cl1's natural placement puts a tile's
# 8 splits (no shared operands) in one GPC, and the cluster launch puts one split's 16 tiles
# (each operand block shared by 4) in one GPC. SPLITFAST (split = unit % 8): the cluster pairs
# get cl1's arrangement (a tile pair's 8 splits on consecutive clusters, so in one GPC).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
tr() { # name variant shape configs...
  local name=$1 v=$2 shape=$3; shift 3
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  if [ $v = SHIPPED ]; then KT_DIAG_DUMP=1 timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1
  else KT_DIAG_DUMP=1 KT_DIAG=$v timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1; fi
  echo "== $name $v at $(( $(date +%s) - t0 )) s"; grep -E "launch|main loop|published|flags|C stored" "$R/${name}_$v.log" | cut -c1-160
}
for rep in 1 2; do
for v in SHIPPED KT_DIAG_SPLITFAST; do
  tr k32k_$rep $v 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8
done; done
echo "done at $(( $(date +%s) - t0 )) s"
