#!/usr/bin/env bash
# Session 10, call 6: the cluster barriers cost the pairs ~2 us of main loop at 1536^2 (call 5).
# Which one: the start (LOCAL_SYNCSTART keeps only it) or the exit (LOCAL_SYNCEXIT)? Is it the
# producer warpgroup's idle warps waiting in barrier.cluster.wait for the whole launch? PARK:
# every thread meets __syncthreads() before the exit's cluster barrier (idle warps wait there
# instead); ALIGNED_PARK: the same with the .aligned barrier forms. PARK on the shipped cl2 too.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { # variant shape config
  local v=$1 shape=$2 cfg=$3
  case $v in
    cl1|cl2) env -u KT_DIAG timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    *) KT_DIAG=KT_DIAG_$v timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
  esac
}
show() { printf '%-16s ' $1; grep -E "CTAs, launch|first stage full|main loop done|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
V="cl2 LOCAL LOCAL_SYNCSTART LOCAL_SYNCEXIT LOCAL_PARK PARK ALIGNED_PARK"
for rep in 1 2 3; do
  for spec in "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1" \
              "s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g1.sk1 sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g1.sk1"; do
    set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
    run cl1 $shape $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    for v in $V; do run $v $shape $c2 > "$R/${name}_${v}_$rep.log" 2>&1; done
    echo "== $name rep $rep at $(( $(date +%s) - t0 )) s"
    for f in cl1 $V; do show $f "$R/${name}_${f}_$rep.log"; done
  done
done
for rep in 1 2; do
  for spec in "k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8" \
              "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1" \
              "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab"; do
    set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
    run cl1 $shape $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    for v in cl2 PARK ALIGNED_PARK; do run $v $shape $c2 > "$R/${name}_${v}_$rep.log" 2>&1; done
    echo "== $name rep $rep at $(( $(date +%s) - t0 )) s"
    for f in cl1 cl2 PARK ALIGNED_PARK; do show $f "$R/${name}_${f}_$rep.log"; done
  done
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
