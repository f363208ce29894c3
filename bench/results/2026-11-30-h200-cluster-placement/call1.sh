#!/usr/bin/env bash
# Session 8, call 1: why cluster pairs lose. The same cl2 configs traced three ways (uncommitted
# diagnostic build, KT_DIAG define): as shipped (B multicast, remote releases); NOMC (each CTA
# loads all of B itself, releases still remote: the pair's coupling without multicast); LOCAL
# (no multicast, local releases: only the cluster launch and its placement); against cl1.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
tr() { # name shape configs...
  local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  for v in SHIPPED KT_DIAG_NOMC KT_DIAG_LOCAL; do
    if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1
    else KT_DIAG=$v timeout 100 $K trace --shape "$shape" "${args[@]}" > "$R/${name}_$v.log" 2>&1; fi
    echo "== $name $v at $(( $(date +%s) - t0 )) s"; grep -E "config|launch|main loop|first stage|C stored|check" "$R/${name}_$v.log" | cut -c1-160
  done
}
tr k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8
tr s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
tr s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
echo "done at $(( $(date +%s) - t0 )) s"
