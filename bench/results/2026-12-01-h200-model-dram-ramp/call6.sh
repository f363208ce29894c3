#!/usr/bin/env bash
# Session 21, call 6 (call 4's script, other configs): the first stage issued before the CTA barrier (diagnostic KT_DIAG_EARLY,
# passed by `kerntune trace` to its traced build only): thread 0 issues the first unit's stage 0
# right after the barriers' init, and the producer loop starts at stage 1. Shipped and EARLY
# traced alternately, three passes, at the four decode and two wave-quantization picks.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
export KERNTUNE_DB="$R/k.db"
{ date -u; echo "build $(cat dist/COMMIT) + diag-early.patch"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
cfgs=(
  "d64sw 64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g1.sk1.swab"
  "d64un9 64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g1.sk1"
  "d64un8 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1"
  "d64sw8 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab"
)
for pass in 1 2 3; do
  for c in "${cfgs[@]}"; do
    set -- $c
    for v in SHIPPED KT_DIAG_EARLY; do
      if [ $v = SHIPPED ]; then env -u KT_DIAG timeout 100 $K trace --reps 60 --shape $2 --config $3 > "$R/$1_${v}_$pass.log" 2>&1
      else KT_DIAG=$v timeout 100 $K trace --reps 60 --shape $2 --config $3 > "$R/$1_${v}_$pass.log" 2>&1; fi
      printf '%-6s %-14s p%d ' $1 $v $pass
      grep -oE "launch [0-9.]+ us median \([0-9.]+ min" "$R/$1_${v}_$pass.log" | tr '\n' ' '
      awk '/first load issued|first stage full|main loop done|C stored/ {printf "%s %s ", $1$2, $(NF-2)}' "$R/$1_${v}_$pass.log"; echo
    done
  done
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
