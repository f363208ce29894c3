#!/usr/bin/env bash
# Session 10, call 1: does the cluster launch's ~5% cost depend on how the cluster is launched?
# Variants of the same cl2/cn2 kernels: the launch attribute CLUSTER_SCHEDULING_POLICY_PREFERENCE
# (POL1 spread, POL2 load balancing), and compile-time __cluster_dims__ (KT_DIAG_CTDIMS) launched
# by cuLaunchKernel (PLAIN) or cuLaunchKernelEx without attributes (NOATTR). cl1 as reference.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { # variant shape config
  local v=$1 shape=$2 cfg=$3
  case $v in
    SHIPPED) env -u KT_DIAG timeout 100 $K trace --shape $shape --config $cfg --per-cta ;;
    POL0) KT_DIAG_POLICY=0 timeout 100 $K trace --shape $shape --config $cfg --per-cta ;;
    POL1) KT_DIAG_POLICY=1 timeout 100 $K trace --shape $shape --config $cfg --per-cta ;;
    POL2) KT_DIAG_POLICY=2 timeout 100 $K trace --shape $shape --config $cfg --per-cta ;;
    PLAIN) KT_DIAG=KT_DIAG_CTDIMS KT_DIAG_PLAIN=1 timeout 100 $K trace --shape $shape --config $cfg --per-cta ;;
    NOATTR) KT_DIAG=KT_DIAG_CTDIMS KT_DIAG_NOATTR=1 timeout 100 $K trace --shape $shape --config $cfg --per-cta ;;
  esac
}
for rep in 1 2; do
  for spec in "k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8" \
              "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1" \
              "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
              "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"; do
    [ $(( $(date +%s) - t0 )) -gt 430 ] && break
    set -- $spec; name=$1 shape=$2 c2=$3 c1=$4
    run SHIPPED $shape $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    for v in SHIPPED POL1 POL2 PLAIN NOATTR; do run $v $shape $c2 > "$R/${name}_${v}_$rep.log" 2>&1; done
    echo "== $name rep $rep at $(( $(date +%s) - t0 )) s"
    for f in cl1 SHIPPED POL1 POL2 PLAIN NOATTR; do
      printf '%-8s ' $f; grep -E "CTAs, launch|main loop done|rror|fail" "$R/${name}_${f}_$rep.log" | tr -s ' ' | cut -c1-120 | tr '\n' '|'; echo
    done
  done
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
