#!/usr/bin/env bash
# Session 19, call 7: split-K's flag polls as acquire loads (no fence.acq_rel after them:
# KT_DIAG_ACQ) and a shorter poll backoff (KT_DIAG_BACKOFF=64 ns cap, against 256), on 512^2 x
# 32768's pick: traces and benches alternated with a35fac5's kernel (old), three passes; then
# xbench's seven-flag poll.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
S=512x512x32768; C=sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8
run() { local v=$1; shift; case $v in
  old) timeout 60 $K "$@" ;;
  acq) KT_DIAG_ACQ=1 timeout 60 $K "$@" ;;
  acqb) KT_DIAG_ACQ=1 KT_DIAG_BACKOFF=64 timeout 60 $K "$@" ;;
  b64) KT_DIAG_BACKOFF=64 timeout 60 $K "$@" ;;
esac; }
for v in old acq acqb b64; do
  run $v trace --per-cta --reps 20 --shape $S --config $C > "$R/tr_$v.log" 2>&1
  printf '%-5s ' $v; grep -E "CTAs, launch|published|flags ready|C stored" "$R/tr_$v.log" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-62 | tr '\n' '|'; echo
done
cb() {
  export KERNTUNE_DB="$R/$1.db"
  run $2 tune --shape $S --config $C > "$R/t_$1.log" 2>&1
  run $2 bench --shape $S --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-10s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-1), $NF}'
  rm -f "$R/$1.db"*; unset KERNTUNE_DB
}
for pass in 1 2 3; do for v in old acq acqb b64; do cb ${v}_$pass $v; done; done
timeout 120 .carry/s19/xbench > "$R/xbench.log" 2>&1; grep -E "^(mode|7 |ld\.)" "$R/xbench.log"
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e b.csv | xargs rm -f)
