#!/usr/bin/env bash
# Session 9, call 12: the stripe's sum from shared memory takes ~1.35 us with or without its
# stores (call 11). TWICE runs the same code twice (one call site in a loop), the first pass
# storing nothing, marked in the epoch-read slot: a cold pass against a warm one.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
for rep in 1 2; do for v in SHIPPED KT_DIAG_TWICE; do
  args=(--config sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8)
  if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --shape 512x512x32768 "${args[@]}" > "$R/k32k_${v}_$rep.log" 2>&1
  else KT_DIAG=$v timeout 100 $K trace --shape 512x512x32768 "${args[@]}" > "$R/k32k_${v}_$rep.log" 2>&1; fi
  echo "== $v $rep at $(( $(date +%s) - t0 )) s"
  grep -E "CTAs, launch|flags ready|C stored|epoch read" "$R/k32k_${v}_$rep.log" | sed -E 's/gemm:bf16:bf16:nt://; s/\(.*//' | cut -c1-110
done; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
