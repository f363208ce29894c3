#!/usr/bin/env bash
# Session 19, call 8: the prologue. Traces with two extra marks (KT_DIAG_PRO=1: "published" = thread
# 0 past the CTA barrier, "flags ready" = the producer's first unit computed, before its first
# empty-barrier wait) and with those marks plus the parameter block touched at entry by warp 1, one
# word per 16 bytes (KT_DIAG_PRO=2: its constant-cache lines fetched together, before thread 0
# needs them); 64 x 4096^2's and 1536^2's picks. Then both picks benched default against PRO=2
# (the touch only; marks exist in traced builds alone), three passes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { local v=$1; shift; case $v in
  def) timeout 60 $K "$@" ;;
  p1) KT_DIAG_PRO=1 timeout 60 $K "$@" ;;
  p2) KT_DIAG_PRO=2 timeout 60 $K "$@" ;;
esac; }
for sc in "64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1" "1536x1536x8192 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g1.sk1"; do
  set -- $sc
  for pass in 1 2; do for v in p1 p2; do
    run $v trace --per-cta --reps 20 --shape $1 --config $2 > "$R/tr_${1}_${v}_$pass.log" 2>&1
    printf '%-15s %-3s ' $1 $v; grep -E "CTAs, launch|first load|first stage|published|flags ready" "$R/tr_${1}_${v}_$pass.log" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/; s/sm90[^:]*://' | tr -s ' ' | cut -c1-60 | tr '\n' '|'; echo
  done; done
done
cb() {
  export KERNTUNE_DB="$R/$1.db"
  run $2 tune --shape $3 --config $4 > "$R/t_$1.log" 2>&1
  run $2 bench --shape $3 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-16s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1), $NF}'
  rm -f "$R/$1.db"*; unset KERNTUNE_DB
}
for pass in 1 2 3; do for v in def p2; do
  cb d_${v}_$pass $v 64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1
  cb s_${v}_$pass $v 1536x1536x8192 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g1.sk1
done; done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e b.csv | xargs rm -f)
