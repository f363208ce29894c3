#!/usr/bin/env bash
# Session 9, call 1: cluster pairs given the non-cluster launch's placement of work. A diagnostic
# build picks each cluster's slot from its TPC (%smid / 2): TABLE (the TPC order the non-cluster
# launch used, measured in session 8 call 2) or STRIDE (TPCs interleaved by 8), with the full
# co-resident grid (KT_DIAG_FULLGRID). Traces of cl1, cl2/cn2 as shipped, and the two slots.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
export KT_DIAG_FULLGRID=1 KT_DIAG_DUMP=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
tr() { # name shape configs...
  local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  for v in SHIPPED KT_DIAG_SMID_TABLE KT_DIAG_SMID_STRIDE; do
    if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 120 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1
    else KT_DIAG=$v timeout 120 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1; fi
    echo "== $name $v at $(( $(date +%s) - t0 )) s"; grep -E "CTAs, launch|main loop|C stored|rror" "$R/${name}_$v.log" | cut -c1-150
  done
}
tr k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 sm90.bm128.bn64.bk64.s8.c2.e0.cn2.g1.sk4 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8
tr s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
tr d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab
tr s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
