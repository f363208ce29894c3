#!/usr/bin/env bash
# Session 8, call 3: the cluster launch packs consecutive clusters into one GPC (call 2's SM ids),
# so neighbouring units (same split, neighbouring tiles: shared operands) share a GPC, where cl1
# spreads them over all GPCs. PERM: unit = cluster * s mod units (s ~ units / 8, coprime), which
# spreads neighbouring units over GPCs again; with multicast (PERM) and without (PERM_LOCAL).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
tr() { # name variant shape configs...
  local name=$1 v=$2 shape=$3; shift 3
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  if [ $v = SHIPPED ]; then timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1
  else KT_DIAG=$v timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1; fi
  echo "== $name $v at $(( $(date +%s) - t0 )) s"; grep -E "launch|main loop|C stored" "$R/${name}_$v.log" | cut -c1-160
}
for v in SHIPPED KT_DIAG_PERM KT_DIAG_PERM_LOCAL; do
  tr k32k $v 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8
  tr s1536 $v 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
done
for v in SHIPPED KT_DIAG_PERM; do
  tr s4096 $v 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
  tr s8192 $v 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
done
echo "done at $(( $(date +%s) - t0 )) s"
