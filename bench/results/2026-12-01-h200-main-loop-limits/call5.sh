#!/usr/bin/env bash
# Session 9, call 5: is the L2-fed main loop (~98 GB/s into each SM at 1536^2, 512^2 and the
# decode step) a per-SM limit or the L2's aggregate? The same tile on fewer CTAs (M smaller;
# split-K fewer ways), by traces: per-CTA main loop time against the CTA count.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
tr() { timeout 100 $K trace --shape $1 --config $2 > "$R/$1_$2.log" 2>&1
  echo "$1 $2"; grep -E "CTAs, launch|first stage|main loop" "$R/$1_$2.log" | sed -E 's/gemm:bf16:bf16:nt:.* sm90/sm90/; s/\(.*//' | cut -c1-110; }
C=sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
for m in 1536 768 384 128; do tr ${m}x1536x8192 $C; done
for s in 8 4 2; do tr 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk$s; done
tr 256x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8
for n in 4096 2048 1024; do tr 64x${n}x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
