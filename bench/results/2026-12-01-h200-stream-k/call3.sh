#!/usr/bin/env bash
# Session 15, call 3: stream-K with the publish off the consumers' path (thread 64 raises the
# flags after an mbarrier) and the owner's peers bulk-loaded over the idle ring. (1) The tuner's
# check on ragged shapes, dtypes, layouts, e0/e2, FP32 out. (2) The same tiles with and without
# stream-K benched alternately. (3) Traces with KT_DIAG_LAST (the last unit's stamps).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
K=dist/bin/kerntune
chk() {  # shape config [extra args]
  local s=$1 c=$2; shift 2
  KERNTUNE_DB="$R/check.db" timeout 120 $K tune --shape $s --config $c "$@" > "$R/chk.tmp" 2>&1
  echo "rc=$? $s $c $* :: $(grep -E 'outcomes|winner|rejected:|error' "$R/chk.tmp" | tr '\n' ' ')" >> "$R/check.log"
  cat "$R/chk.tmp" >> "$R/check_full.log"
}
B=sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st
for s in 8192x8192x8192 4096x4096x4096 4100x4096x4096 1000x1000x1000 2048x2048x2048 1536x1536x8192 4096x3840x4096 200x3000x4104 8192x6144x4096; do chk $s $B; done
chk 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk1.st
chk 333x777x2056 sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1.st
chk 777x1333x4104 sm90.bm128.bn256.bk64.s3.c2.e0.cl1.g8.sk1.st
chk 777x1336x4104 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1.st
chk 777x1336x4104 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk1.st
chk 777x1333x4104 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk1.st --dtype fp16
chk 777x1336x4104 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk1.st --layout nn
chk 777x1336x4104 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st --out-dtype fp32
chk 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st --dtype fp16 --layout nn
chk 3000x5000x3000 sm90.bm128.bn192.bk64.s4.c2.e2.cl1.g8.sk1.st --layout nn
echo "checked at $(( $(date +%s) - t0 )) s"
pairs="8192x8192x8192:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
4096x4096x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
4096x3840x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
8192x6144x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
8192x4096x14336:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
2048x2048x2048:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
1536x1536x8192:sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
512x512x32768:sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk8"
for pc in $pairs; do
  s=${pc%%:*}; c=${pc#*:}
  KERNTUNE_DB="$R/base.db" timeout 90 $K tune --shape $s --config $c >> "$R/tune_base.log" 2>&1 || echo "tune base $s rc $?"
done
skpairs="8192x8192x8192:$B 4096x4096x4096:$B 4096x3840x4096:$B 8192x6144x4096:$B 8192x4096x14336:$B 2048x2048x2048:$B 1536x1536x8192:$B 512x512x32768:sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk1.st"
for pc in $skpairs; do
  s=${pc%%:*}; c=${pc#*:}
  KERNTUNE_DB="$R/sk.db" timeout 90 $K tune --shape $s --config $c >> "$R/tune_sk.log" 2>&1 || echo "tune sk $s rc $?"
done
echo "tuned at $(( $(date +%s) - t0 )) s"
args=""; for pc in $pairs; do args="$args --shape ${pc%%:*}"; done
for i in 0 1; do
  for b in base sk; do
    KERNTUNE_DB="$R/$b.db" timeout 120 $K bench $args --rounds 5 --csv "$R/bench_${b}_$i.csv" > "$R/bench_${b}_$i.log" 2>&1 || echo "bench $b $i rc $?"
  done
done
echo "benched at $(( $(date +%s) - t0 )) s"
for s in 4096x4096x4096 4096x3840x4096 2048x2048x2048; do
  for c in sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 $B; do
    KT_DIAG=KT_DIAG_LAST timeout 60 $K trace --reps 10 --per-cta --shape $s --config $c > "$R/trace_${s}_$c.log" 2>&1 || echo "trace $s $c rc $?"
  done
done
echo "traced at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db* "$R/chk.tmp"
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
