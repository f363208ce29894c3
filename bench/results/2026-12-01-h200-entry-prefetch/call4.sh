#!/usr/bin/env bash
# Session 13, call 4: the narrow tile's main loop split into its parts (diag-noload.patch).
# KT_DIAG_NOLOAD: the producer loads only the first kStages k-tiles, then arrives on the full
# barriers without TMA (the wgmma and barrier work stay, the TMA writes into shared memory go);
# KT_DIAG_NOWGMMA: the consumers issue no wgmma (the loads and barriers stay). One CTA alone
# (one tile, K = 32768) per tile shape, and 512^2 x 32768's split-K configs on the whole GPU.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/dist/bin/kerntune"
t0=$(date +%s)
show() { printf '%-52s ' "$1"; grep -E "CTAs, launch|first stage|main loop done|SM clock|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:n[nt]:[^ ]+ (sm90|smallm)[^:]+: //; s/ +/ /g; s/ \(.*//; s/first stage full/full/; s/main loop done/loop/; s/SM clock, entry to main loop done:/clk/' | cut -c1-60 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for spec in "128x64x32768 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk1" \
              "128x128x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk1" \
              "128x256x32768 sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g1.sk1" \
              "64x128x32768 sm90.bm64.bn128.bk64.s8.c1.e0.cl1.g1.sk1" \
              "512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8" \
              "512x512x32768 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk4"; do
    set -- $spec
    for v in NONE NOLOAD NOWGMMA; do
      tag="$1_${2#sm90.}_$v"
      if (( $(date +%s) - t0 > 500 )); then echo "time budget: skipped $tag $rep"; continue; fi
      KT_DIAG=KT_DIAG_$v timeout 90 $KT trace --reps 20 --shape $1 --config $2 > "$R/${tag}_$rep.log" 2>&1
      show "$tag $rep" "$R/${tag}_$rep.log"
    done
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
