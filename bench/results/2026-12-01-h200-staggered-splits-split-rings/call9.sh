#!/usr/bin/env bash
# Session 19, call 9: the prologue's last steps (KT_DIAG_PRO=3): "epoch read" = thread 0 past the
# barrier inits (before the init fence), "published" = the producer past its first empty wait and
# expect_tx, "flags ready" = its first TMA instruction issued; 64 x 4096^2's and 1536^2's picks,
# two traces each.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
for sc in "64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1" "1536x1536x8192 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g1.sk1"; do
  set -- $sc
  for pass in 1 2; do
    KT_DIAG_PRO=3 timeout 60 $K trace --per-cta --reps 20 --shape $1 --config $2 > "$R/tr_${1}_$pass.log" 2>&1
    printf '%-15s ' $1; grep -E "CTAs, launch|epoch read|published|flags ready|first load|first stage" "$R/tr_${1}_$pass.log" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/; s/sm90[^:]*://' | tr -s ' ' | cut -c1-60 | tr '\n' '|'; echo
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
