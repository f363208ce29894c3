#!/usr/bin/env bash
# Session 10, call 3: at 1536^2 the pairs lose ~5% with neither the launch nor the placement to
# blame (call 2). Is it the pairs' unit mapping or the cl2 kernel's code? PAIRMAP: the cl1 kernel
# (no multicast, no cluster barriers) walking the cl2 kernel's units (vertically adjacent tiles,
# rank = CTA parity), launched plainly or as clusters of 2 (FORCE_CLUSTER). Also the phases of
# 512^2's 64 x 128 sk4 tiles (cuBLASLt's structure in our orientation).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { # variant shape config
  local v=$1 shape=$2 cfg=$3
  case $v in
    cl1|cl2|T) env -u KT_DIAG timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    PAIRMAP) KT_DIAG=KT_DIAG_PAIRMAP timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    PAIRMAPCL) KT_DIAG=KT_DIAG_PAIRMAP KT_DIAG_FORCE_CLUSTER=2 timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
  esac
}
show() { printf '%-10s ' $1; grep -E "CTAs, launch|first stage full|main loop done|published|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
for rep in 1 2 3; do
  for spec in "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1" \
              "k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8"; do
    set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
    run cl1 $shape $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    run cl2 $shape $c2 > "$R/${name}_cl2_$rep.log" 2>&1
    run PAIRMAP $shape $c1 > "$R/${name}_PAIRMAP_$rep.log" 2>&1
    run PAIRMAPCL $shape $c1 > "$R/${name}_PAIRMAPCL_$rep.log" 2>&1
    echo "== $name rep $rep at $(( $(date +%s) - t0 )) s"
    for f in cl1 cl2 PAIRMAP PAIRMAPCL; do show $f "$R/${name}_${f}_$rep.log"; done
  done
done
for rep in 1 2; do
  i=0
  for c in sm90.bm64.bn128.bk64.s8.c1.e0.cl1.g1.sk4 sm90.bm64.bn128.bk64.s8.c1.e0.cl2.g1.sk4 sm90.bm64.bn128.bk64.s8.c1.e2.cl1.g8.sk4 sm90.bm128.bn64.bk64.s8.c2.e0.cl1.g1.sk4; do
    i=$((i+1)); run T 512x512x32768 $c > "$R/k32k_T${i}_$rep.log" 2>&1; show "T$i" "$R/k32k_T${i}_$rep.log"
  done
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
