#!/usr/bin/env bash
# Session 9, call 9: L2 prefetch ahead of the ring. The producer also issues
# cp.async.bulk.prefetch.tensor (L2) for its boxes D k-tiles past the loads (KT_DIAG_PREFETCH=D;
# unpaired nt kernels only), so that a refill finds its operands in L2 rather than DRAM.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
run() { local v=$1 rep=$2
  for spec in "512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk4" \
              "1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g1.sk1" \
              "2048x2048x2048 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g1.sk1" "4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1" \
              "64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" "64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1"; do
    set -- $spec; local shape=$1; shift
    local args=(); for c in "$@"; do args+=(--config "$c"); done
    if [ $v = 0 ]; then env -u KT_DIAG timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/D${v}_$rep.log" 2>&1
    else KT_DIAG=KT_DIAG_PREFETCH=$v timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/D${v}_$rep.log" 2>&1; fi
  done
  echo "== D=$v $rep at $(( $(date +%s) - t0 )) s"
  grep -E "CTAs, launch|main loop|check [^o]|rror" "$R/D${v}_$rep.log" | sed -E 's/gemm:bf16:bf16:nt://; s/\(.*//; s/  main loop done +[0-9]+ +/ loop /' | cut -c1-120 | paste - -
}
for rep in 1 2; do for v in 0 4 8 16; do run $v $rep; done; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
