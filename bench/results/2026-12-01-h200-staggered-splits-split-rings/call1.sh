#!/usr/bin/env bash
# Session 19, call 1: split-K's splits staggered along K (split z of S gets kps - skew * (S - 2z - 1)
# / 2 k-tiles, so the splits finish in turn and publish in turn) with each CTA loading its peers'
# stripes as their flags rise. Variants: old (HEAD), ex (loads as flags rise, even splits), sk1,
# sk2 (loads as flags rise, skew 1 and 2 k-tiles). (a) traces of 512^2 x 32768's pick; (b) the pick
# tuned alone (verified) and benched beside cuBLASLt, variants alternated, three passes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
NEW="$PWD/dist/bin/kerntune"; OLD="$PWD/.carry/s19/dist_old/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "new $(cat dist/COMMIT) old $(cat .carry/s19/dist_old/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
show() { printf '%-8s ' $1; grep -E "CTAs, launch|main loop done|published|flags ready|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-70 | tr '\n' '|'; echo; }
S=512x512x32768; C=sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8
run() {  # variant, then the command
  local v=$1; shift
  case $v in
    old) timeout 60 $OLD "$@" ;;
    ex) KT_DIAG_EXCHANGE=1 timeout 60 $NEW "$@" ;;
    sk1) KT_DIAG_EXCHANGE=1 KT_DIAG_SKEW=1 timeout 60 $NEW "$@" ;;
    sk2) KT_DIAG_EXCHANGE=1 KT_DIAG_SKEW=2 timeout 60 $NEW "$@" ;;
  esac
}
for v in old ex sk1 sk2; do
  run $v trace --per-cta --reps 20 --shape $S --config $C > "$R/tr_$v.log" 2>&1; show $v "$R/tr_$v.log"
done
echo "traces at $(( $(date +%s) - t0 )) s"
cb() {  # name variant: tune the config alone, then bench it beside cuBLASLt
  export KERNTUNE_DB="$R/$1.db"
  run $2 tune --shape $S --config $C > "$R/t_$1.log" 2>&1
  run $2 bench --shape $S --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-10s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1)}'
  grep -i -E "fail|mismatch|error" "$R/t_$1.log" | head -3
  rm -f "$R/$1.db"*; unset KERNTUNE_DB
}
for pass in 1 2 3; do
  for v in old ex sk1 sk2; do cb ${v}_$pass $v; done
done
echo "benches at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e b.csv | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
