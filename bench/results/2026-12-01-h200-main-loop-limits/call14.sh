#!/usr/bin/env bash
# Session 9, call 14: what is left of the pairs' loss once they get the plain launch's TPC
# layout (call 1: 26.1 against 23.4 us at 512^2)? TABLE_LOCAL adds to the TPC-order slots the
# session-8 LOCAL variant (no multicast: each CTA loads all of B; releases only local): if it is
# back at cl1's main loop, the coupling of the pair costs the rest; if not, the cluster launch.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
export KT_DIAG_FULLGRID=1
t0=$(date +%s)
for rep in 1 2; do for v in SHIPPED KT_DIAG_SMID_TABLE KT_DIAG_TABLE_LOCAL KT_DIAG_LOCAL; do
  for spec in "512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8" \
              "1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1"; do
    set -- $spec; shape=$1; shift
    args=(); for c in "$@"; do args+=(--config "$c"); done
    if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/${v}_$rep.log" 2>&1
    else KT_DIAG=$v timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/${v}_$rep.log" 2>&1; fi
  done
  echo "== $v $rep at $(( $(date +%s) - t0 )) s"
  grep -E "CTAs, launch|first stage|main loop|rror" "$R/${v}_$rep.log" | sed -E 's/gemm:bf16:bf16:nt://; s/\(.*//' | cut -c1-110
done; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
