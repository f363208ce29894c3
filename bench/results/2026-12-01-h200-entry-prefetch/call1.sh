#!/usr/bin/env bash
# Session 13, call 1: an L2 prefetch of the first unit's first k-tiles at entry
# (diag-prefetch.patch). KT_DIAG=KT_DIAG_PREFETCH=n: the producer warpgroup's idle warps
# bulk-prefetch n k-tiles of the first unit's A and B rows into L2 before the barriers' set-up.
# Shipped (NONE) and PF2, PF8 traced alternately, twice, on six shapes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/dist/bin/kerntune"
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$R/gpu.txt" 2>&1
show() { printf '%-18s ' "$1"; grep -E "CTAs, launch|first load|first stage|main loop done|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:n[nt]:[^ ]+ (sm90|smallm)[^:]+: //; s/ +/ /g; s/ \(.*//' | cut -c1-60 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for spec in "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
              "d1 1x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
              "d16 16x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g1.sk1.swab" \
              "d14336 64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1" \
              "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1" \
              "s512 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk8"; do
    set -- $spec
    for v in NONE PREFETCH=2 PREFETCH=8; do
      if (( $(date +%s) - t0 > 520 )); then echo "time budget: skipped $1 $v $rep"; continue; fi
      tag=${v/=/}
      KT_DIAG=KT_DIAG_$v timeout 60 $KT trace --reps 60 --shape $2 --config $3 > "$R/${1}_${tag}_$rep.log" 2>&1
      show "$1 $tag $rep" "$R/${1}_${tag}_$rep.log"
    done
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
