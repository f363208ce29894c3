#!/usr/bin/env bash
# Session 19, call 5: where 512^2 x 32768's exchange spends its time. (a) traces of the pick with the
# "published" mark moved (KT_DIAG_MARKS=1: both consumers' main loops done; 2: the tile staged; 3:
# the bulk stores complete, before the fence and the flag's release) and the "flags ready" mark
# moved (4: the flags seen, before the stripes' loads; 5: before the flag wait), each beside the
# shipped marks; (b) xbench again with the release and the fences alone.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
S=512x512x32768; C=sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8
for pass in 1 2; do
  for m in 0 1 2 3 4 5; do
    if [ $m = 0 ]; then timeout 60 $K trace --per-cta --reps 20 --shape $S --config $C > "$R/tr_${m}_$pass.log" 2>&1
    else KT_DIAG_MARKS=$m timeout 60 $K trace --per-cta --reps 20 --shape $S --config $C > "$R/tr_${m}_$pass.log" 2>&1; fi
    printf 'marks %s pass %s ' $m $pass; grep -E "CTAs, launch|main loop done|published|flags ready|C stored" "$R/tr_${m}_$pass.log" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-62 | tr '\n' '|'; echo
  done
done
timeout 300 .carry/s19/xbench > "$R/xbench.log" 2>&1; cat "$R/xbench.log"
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
