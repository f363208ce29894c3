#!/usr/bin/env bash
# Session 10, call 4: the pairs' ~5% at 1536^2 is in the cl2 kernel's code (call 3). Candidates:
# B loaded as two half boxes (BHALVES: the cl1 kernel with B's box tile_n / 2 rows, two loads a
# stage, as the pairs' CTAs do), and what is left of cl2 without multicast and remote releases
# (LOCAL, the session-8 variant on this code).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K=.carry/diag/kerntune
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { # variant shape config
  local v=$1 shape=$2 cfg=$3
  case $v in
    cl1|cl2) env -u KT_DIAG timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    BHALVES) KT_DIAG=KT_DIAG_BHALVES KT_DIAG_BHALF=1 timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
    LOCAL) KT_DIAG=KT_DIAG_LOCAL timeout 60 $K trace --shape $shape --config $cfg --per-cta ;;
  esac
}
show() { printf '%-10s ' $1; grep -E "CTAs, launch|first stage full|main loop done|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
for rep in 1 2 3; do
  for spec in "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1" \
              "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1" \
              "s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g1.sk1 sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g1.sk1"; do
    set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
    run cl1 $shape $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    run BHALVES $shape $c1 > "$R/${name}_BHALVES_$rep.log" 2>&1
    run cl2 $shape $c2 > "$R/${name}_cl2_$rep.log" 2>&1
    run LOCAL $shape $c2 > "$R/${name}_LOCAL_$rep.log" 2>&1
    echo "== $name rep $rep at $(( $(date +%s) - t0 )) s"
    for f in cl1 BHALVES cl2 LOCAL; do show $f "$R/${name}_${f}_$rep.log"; done
  done
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
