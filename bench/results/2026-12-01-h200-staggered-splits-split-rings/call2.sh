#!/usr/bin/env bash
# Session 19, call 2: a decode step's A (tokens, L2-hot) and B (weights, streamed from DRAM) in
# rings of their own depth (KT_DIAG_RING=a,b: a A stages, b B stages in the config's allocation;
# one producer thread for each), so more of the shared memory holds weight bytes in flight.
# (a) traces of 64 x 4096^2's pick (64 x 32 bk128 s9: 9 + 9 stages) against 4+18, 3+20, 2+22;
# (b) the pick tuned alone (verified) and benched beside cuBLASLt and the copy, alternated, three
# passes; (c) 64 x 14336 x 4096's pick (64 x 128 bk64 s6) against 3+7 and 2+7, two passes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
NEW="$PWD/dist/bin/kerntune"; OLD="$PWD/.carry/s19/dist_old/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "new $(cat dist/COMMIT) old $(cat .carry/s19/dist_old/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
show() { printf '%-8s ' $1; grep -E "CTAs, launch|first stage full|main loop done|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-70 | tr '\n' '|'; echo; }
run() {  # variant, then the command
  local v=$1; shift
  case $v in
    old) timeout 60 $OLD "$@" ;;
    r*) KT_DIAG_RING=$(echo ${v#r} | tr _ ,) timeout 60 $NEW "$@" ;;
  esac
}
cb() {  # name variant shape config: tune the config alone, then bench it beside cuBLASLt
  export KERNTUNE_DB="$R/$1.db"
  run $2 tune --shape $3 --config $4 > "$R/t_$1.log" 2>&1
  run $2 bench --shape $3 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-14s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1), $NF}'
  grep -i -E "fail|mismatch|error" "$R/t_$1.log" | head -3
  rm -f "$R/$1.db"*; unset KERNTUNE_DB
}
S=64x4096x4096; C=sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1
for v in old r4_18 r3_20 r2_22; do
  run $v trace --per-cta --reps 20 --shape $S --config $C > "$R/tr_$v.log" 2>&1; show $v "$R/tr_$v.log"
done
echo "traces at $(( $(date +%s) - t0 )) s"
for pass in 1 2 3; do
  for v in old r4_18 r3_20 r2_22; do cb d_${v}_$pass $v $S $C; done
done
S=64x14336x4096; C=sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1
for pass in 1 2; do
  for v in old r3_7 r2_7; do cb w_${v}_$pass $v $S $C; done
done
echo "benches at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e b.csv | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
