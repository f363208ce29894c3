#!/usr/bin/env bash
# Session 10, call 2: does a cluster launch by itself slow a kernel that uses no cluster feature?
# The cl1 kernel launched plainly (NAT) or as clusters of 2 (NATCL: KT_DIAG_FORCE_CLUSTER=2), and
# with every CTA's unit taken from its SM id on a full grid of 132 (SMID, SMIDCL), so the work on
# each SM is identical under both launches and only the launch differs.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { # variant shape config
  local v=$1 shape=$2 cfg=$3
  case $v in
    NAT) env -u KT_DIAG timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    NATCL) KT_DIAG_FORCE_CLUSTER=2 timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    SMID) KT_DIAG=KT_DIAG_SMID_UNIT KT_DIAG_GRID=132 timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    SMIDCL) KT_DIAG=KT_DIAG_SMID_UNIT KT_DIAG_GRID=132 KT_DIAG_FORCE_CLUSTER=2 timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
  esac
}
for rep in 1 2 3; do
  for spec in "k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8" \
              "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1" \
              "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
              "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"; do
    [ $(( $(date +%s) - t0 )) -gt 450 ] && break
    set -- $spec; name=$1 shape=$2 c1=$3
    for v in NAT NATCL SMID SMIDCL; do run $v $shape $c1 > "$R/${name}_${v}_$rep.log" 2>&1; done
    echo "== $name rep $rep at $(( $(date +%s) - t0 )) s"
    for f in NAT NATCL SMID SMIDCL; do
      printf '%-8s ' $f; grep -E "CTAs, launch|first stage full|main loop done|rror|fail" "$R/${name}_${f}_$rep.log" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo
    done
  done
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
