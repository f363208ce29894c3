#!/usr/bin/env bash
# Session 12, call 6: where the ~1.4 us from a CTA's entry to its first TMA load goes (10% of a
# decode step). Diagnostic marks (KT_DIAG_PRO, diag-prologue.patch): thread 0 after the barriers'
# init (slot "epoch"), after the CTA barrier ("publish"), the producer after its first empty-barrier
# wait ("flags"), then the shipped "first load issued". With the L2 flush before each launch
# (the protocol) and without (KT_DIAG_NOFLUSH: code, parameters and descriptors stay in L2).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/.carry/s12/diagpro/kerntune"
t0=$(date +%s)
for rep in 1 2; do
  for spec in "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
              "d1 1x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g8.sk1.swab" \
              "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1"; do
    set -- $spec
    for fl in flush noflush; do
      if [ $fl = noflush ]; then export KT_DIAG_NOFLUSH=1; else unset KT_DIAG_NOFLUSH; fi
      KT_DIAG=KT_DIAG_PRO timeout 60 $KT trace --shape $2 --config $3 > "$R/${1}_${fl}_$rep.log" 2>&1
      echo "== $1 $fl $rep"; grep -vE "^\s*$" "$R/${1}_${fl}_$rep.log" | head -14
    done
  done
done
unset KT_DIAG_NOFLUSH
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
