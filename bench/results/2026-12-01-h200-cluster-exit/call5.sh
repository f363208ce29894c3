#!/usr/bin/env bash
# Session 10, call 5: LOCAL (cl2 without multicast or remote releases) is as slow as cl2 at 1536^2
# while the cl1 kernel on the same units and placement is not (calls 3, 4). What is left in LOCAL
# is cluster instructions: the start and exit barrier.cluster (SYNC keeps only them), the cluster
# special registers (REGS keeps only them), or neither (NOCL).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { # variant shape config
  local v=$1 shape=$2 cfg=$3
  case $v in
    cl1|cl2) env -u KT_DIAG timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    PAIRMAPCL) KT_DIAG=KT_DIAG_PAIRMAP KT_DIAG_FORCE_CLUSTER=2 timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    *) KT_DIAG=KT_DIAG_$v timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
  esac
}
show() { printf '%-11s ' $1; grep -E "CTAs, launch|first stage full|main loop done|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
for rep in 1 2 3; do
  for spec in "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1" \
              "s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g1.sk1 sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g1.sk1"; do
    set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
    run cl1 $shape $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    run PAIRMAPCL $shape $c1 > "$R/${name}_PAIRMAPCL_$rep.log" 2>&1
    for v in cl2 LOCAL LOCAL_NOCL LOCAL_SYNC LOCAL_REGS; do run $v $shape $c2 > "$R/${name}_${v}_$rep.log" 2>&1; done
    echo "== $name rep $rep at $(( $(date +%s) - t0 )) s"
    for f in cl1 PAIRMAPCL cl2 LOCAL LOCAL_NOCL LOCAL_SYNC LOCAL_REGS; do show $f "$R/${name}_${f}_$rep.log"; done
  done
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
