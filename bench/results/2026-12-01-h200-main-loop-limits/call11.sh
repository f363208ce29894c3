#!/usr/bin/env bash
# Session 9, call 11: the 1.3 us from the stripes landing to C stored at 512^2 (a few dozen
# smem loads, adds and four pair stores a thread). NOSTORE: the sums without the stores;
# CPREF: C's first line prefetched to L2 at entry (its page translation warm); BOTH.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
run() { local v=$1 rep=$2
  for spec in "512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8" \
              "1536x1536x8192 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g8.sk1" "2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g1.sk1" \
              "64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab"; do
    set -- $spec; local shape=$1; shift
    local args=(); for c in "$@"; do args+=(--config "$c"); done
    if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/${v}_$rep.log" 2>&1
    else KT_DIAG=$v timeout 100 $K trace --shape $shape "${args[@]}" >> "$R/${v}_$rep.log" 2>&1; fi
  done
  echo "== $v $rep at $(( $(date +%s) - t0 )) s"
  grep -E "CTAs, launch|main loop|flags ready|C stored" "$R/${v}_$rep.log" | sed -E 's/gemm:bf16:bf16:nt://; s/\(.*//; s/ +[0-9]+ +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)$/ p10 \2 med \3 max \5/' | cut -c1-110
}
for rep in 1 2; do for v in SHIPPED KT_DIAG_NOSTORE KT_DIAG_CPREF; do run $v $rep; done; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
