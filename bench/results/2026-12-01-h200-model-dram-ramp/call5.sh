#!/usr/bin/env bash
# Session 21, call 5: barrier waits with a suspend-time hint (diagnostic KT_DIAG_SUSPEND,
# passed by `kerntune trace` to its traced build only): every mbarrier wait of the sm90 kernels
# passes try_wait a suspend-time hint of 0x989680 (DeepGEMM's, CUTLASS's), so a waiting
# thread sleeps in the barrier instead of re-polling. Shipped and SUSPEND traced alternately, three passes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
export KERNTUNE_DB="$R/k.db"
{ date -u; echo "build $(cat dist/COMMIT) + diag-suspend.patch"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
cfgs=(
  "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1"
  "k32k 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8"
  "s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "q4100 4100x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"
  "s8192 8192x8192x8192 sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1.st"
  "d64 64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g1.sk1.swab"
  "d14k 64x14336x4096 sm90.bm64.bn128.bk64.s8.c1.e2.cl1.g8.sk1"
)
for pass in 1 2 3; do
  for c in "${cfgs[@]}"; do
    set -- $c
    for v in SHIPPED KT_DIAG_SUSPEND; do
      if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --reps 60 --shape $2 --config $3 > "$R/$1_${v}_$pass.log" 2>&1
      else KT_DIAG=$v timeout 100 $K trace --reps 60 --shape $2 --config $3 > "$R/$1_${v}_$pass.log" 2>&1; fi
      printf '%-6s %-14s p%d ' $1 $v $pass
      grep -oE "launch [0-9.]+ us median \([0-9.]+ min" "$R/$1_${v}_$pass.log" | tr '\n' ' '
      awk '/^ +(first stage full|main loop done|C stored)/ {printf "%s %s ", $1$2, $(NF-2)} /SM clock/ {printf "MHz %s ", $8}' "$R/$1_${v}_$pass.log"; echo
    done
  done
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
