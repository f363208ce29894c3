#!/usr/bin/env bash
# Session 15, call 2: stream-K (template version 13), first run. (1) Correctness: the tuner's
# check (fresh random data, poisoned C, float64 reference) of stream-K configs on ragged and
# square shapes, both dtypes, both layouts, e0/e2, FP32 out. (2) Speed: the same tile with and
# without stream-K, each tuned into its own database, benched alternately beside cuBLASLt.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
K=dist/bin/kerntune
chk() {  # shape config [extra args]
  local s=$1 c=$2; shift 2
  KERNTUNE_DB="$R/check.db" timeout 120 $K tune --shape $s --config $c "$@" > "$R/chk.tmp" 2>&1
  echo "rc=$? $s $c $* :: $(grep -E 'outcomes|winner|failed|error' "$R/chk.tmp" | tr '\n' ' ')" >> "$R/check.log"
  cat "$R/chk.tmp" >> "$R/check_full.log"
}
B=sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st
for s in 8192x8192x8192 4096x4096x4096 4100x4096x4096 1000x1000x1000 333x777x2056 2048x2048x2048 1536x1536x8192 4096x3840x4096 200x3000x4104; do chk $s $B; done
chk 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk1.st
chk 777x1333x4104 sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1.st
chk 777x1333x4104 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1.st
chk 777x1333x4104 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk1.st
chk 777x1333x4104 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk1.st --dtype fp16
chk 777x1333x4104 sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk1.st --layout nn
chk 777x1336x4104 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st --out-dtype fp32
chk 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st --dtype fp16 --layout nn
echo "checked at $(( $(date +%s) - t0 )) s"
# Speed: the same tiles with and without stream-K.
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
for s in 8192x8192x8192 4096x4096x4096; do
  timeout 60 $K trace --reps 10 --shape $s --config $B > "$R/trace_$s.log" 2>&1 || echo "trace $s rc $?"
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db* "$R/chk.tmp"
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
