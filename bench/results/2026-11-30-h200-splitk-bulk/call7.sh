#!/usr/bin/env bash
# Session 7, call 7: are the sm90 kernels' fixed costs cold instructions after the flush?
# (.carry/icache/icache: flush + launch, against flush + the same code on a tiny problem + launch,
# against flush + another config's code + launch.)
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
I=.carry/icache/icache
timeout 60 $I 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 128x128x512 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8 >> "$R/icache.log" 2>&1
timeout 60 $I 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1 64x32x128 sm90.bm64.bn32.bk128.s6.c1.e0.cl1.g1.sk1 >> "$R/icache.log" 2>&1
timeout 60 $I 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 128x144x64 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g8.sk1 >> "$R/icache.log" 2>&1
timeout 60 $I 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1 128x256x64 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 >> "$R/icache.log" 2>&1
cat "$R/icache.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r
