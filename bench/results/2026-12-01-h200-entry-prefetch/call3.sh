#!/usr/bin/env bash
# Session 13, call 3: what limits narrow tiles' main loops? 128 x 64 runs ~433 cycles a 64-deep
# k-tile (59% of the wgmma peak) where 128 x 128 runs 532 (96%). If the per-stage round trip
# (~180 ns) binds, stages two or four atoms deep (bk128, bk256) bring 128 x 64 toward its wgmma
# time; if shared-memory bandwidth binds (the same bytes a k-tile), they do not. At 512^2 x 32768
# (split-K) and on one CTA alone (one tile, K = 32768).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/dist/bin/kerntune"
t0=$(date +%s)
show() { printf '%-44s ' "$1"; grep -E "CTAs, launch|first stage|main loop done|C stored|SM clock|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:n[nt]:[^ ]+ (sm90|smallm)[^:]+: //; s/ +/ /g; s/ \(.*//; s/first stage full/full/; s/main loop done/loop/; s/C stored/stored/; s/SM clock, entry to main loop done:/clk/' | cut -c1-60 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for spec in "512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk8" \
              "512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8" \
              "512x512x32768 sm90.bm128.bn128.bk128.s3.c2.e0.cl1.g8.sk8" \
              "512x512x32768 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk4" \
              "512x512x32768 sm90.bm128.bn64.bk128.s4.c2.e0.cl1.g1.sk4" \
              "512x512x32768 sm90.bm128.bn64.bk256.s2.c2.e0.cl1.g1.sk4" \
              "512x512x32768 sm90.bm64.bn128.bk64.s8.c1.e0.cl1.g1.sk4" \
              "512x512x32768 sm90.bm64.bn128.bk128.s4.c1.e0.cl1.g1.sk4" \
              "128x64x32768 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk1" \
              "128x64x32768 sm90.bm128.bn64.bk128.s4.c2.e0.cl1.g1.sk1" \
              "128x128x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk1" \
              "128x128x32768 sm90.bm128.bn128.bk128.s3.c2.e0.cl1.g1.sk1"; do
    set -- $spec
    tag="$1_${2#sm90.}"
    if (( $(date +%s) - t0 > 500 )); then echo "time budget: skipped $tag $rep"; continue; fi
    timeout 90 $KT trace --reps 40 --shape $1 --config $2 > "$R/${tag}_$rep.log" 2>&1
    show "$tag $rep" "$R/${tag}_$rep.log"
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
