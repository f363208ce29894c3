#!/usr/bin/env bash
# Session 12, call 7: call 6 put the producer's first TMA ~0.45 us after the CTA barrier, with or
# without the L2 flush (so not DRAM): the first unit's set-up (parameter loads, the grouped
# raster's run-time divisions). KT_DIAG_EARLY (diag-early.patch): thread 0 computes its first
# work unit before the barriers' init, so that latency overlaps the init and the CTA barrier.
# Shipped and EARLY traced alternately, four times, on four shapes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/.carry/s12/diagearly/kerntune"
t0=$(date +%s)
show() { printf '%-22s ' "$1"; grep -E "CTAs, launch|first load|first stage|main loop done|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ sm90[^:]+: //; s/ +/ /g; s/ \(.*//' | cut -c1-60 | tr '\n' '|'; echo; }
for rep in 1 2 3 4; do
  for spec in "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab" \
              "d1 1x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g8.sk1.swab" \
              "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1" \
              "s512 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk8"; do
    set -- $spec
    for v in NONE EARLY; do
      KT_DIAG=KT_DIAG_$v timeout 60 $KT trace --shape $2 --config $3 > "$R/${1}_${v}_$rep.log" 2>&1
      show "$1 $v $rep" "$R/${1}_${v}_$rep.log"
    done
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
