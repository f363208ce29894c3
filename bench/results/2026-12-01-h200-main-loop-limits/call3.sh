#!/usr/bin/env bash
# Session 9, call 3: two k-tiles of wgmma in flight per consumer (wgmma.wait_group 2, the stage
# two back released) against one (shipped), by traces (launch median, flush before each).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { # tag variant
  local tag=$1 v=$2
  for spec in \
    "512x512x32768 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk4 sm90.bm128.bn64.bk64.s8.c2.e0.cn2.g1.sk4 sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8" \
    "64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
    "16x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
    "64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1" \
    "1536x1536x8192 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g1.sk1" \
    "2048x2048x2048 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g1.sk1" \
    "4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"; do
    set -- $spec; local shape=$1; shift
    local args=(); for c in "$@"; do args+=(--config "$c"); done
    if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/${tag}_$v.log" 2>&1
    else KT_DIAG=KT_MMA_IN_FLIGHT=$v timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/${tag}_$v.log" 2>&1; fi
  done
  echo "== $tag $v at $(( $(date +%s) - t0 )) s"
  grep -E "CTAs, launch|main loop|rror|check [^o]" "$R/${tag}_$v.log" | sed -E 's/gemm:bf16:bf16:nt://; s/\(.*//' | cut -c1-120 | paste - - 
}
run r1 SHIPPED; run r1 2; run r2 SHIPPED; run r2 2; run r1 3
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
