#!/usr/bin/env bash
# Session 14, call 1: cluster split-K pairs with 128-deep stages for the decode steps. The search
# pairs a tile's splits in a cluster (clk2) only with 64-deep stages, which keep the DRAM less
# busy than 128-deep ones (twelfth session). 64 x 64 clk2 bk128 streams each weight byte into one
# CTA (64 MB of L2->SM traffic against the 64 x 32 pick's 96) with 96 KB of weights in flight per
# SM (s6) against 64. Restricted tuning, bench against cuBLASLt and the copy, traces.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$R/smi.txt"
S=64x4096x4096
OLD="--config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1"
NEW=""
for s in 5 6 7; do for sw in "" .swab; do for g in g1 g8; do
  NEW="$NEW --config sm90.bm64.bn64.bk128.s$s.c1.e0.clk2.$g.sk2$sw"; done; done; done
KERNTUNE_DB="$R/old.db" timeout 120 kerntune tune --shape $S $OLD > "$R/tune_old.log" 2>&1; echo "old rc $?"
KERNTUNE_DB="$R/new.db" timeout 200 kerntune tune --shape $S $NEW > "$R/tune_new.log" 2>&1; echo "new rc $?"
grep -E "measure|winner|runner" "$R/tune_new.log" | sed -E 's/\[measure ([0-9]+)\/[0-9]+ [^]]*\]/m\1/' | cut -c1-110
S16=16x4096x4096
N16=""
for g in g1 g8; do for s in 6 8; do N16="$N16 --config sm90.bm64.bn16.bk128.s$s.c1.e0.clk2.$g.sk2.swab"; done
  for s in 4 6; do N16="$N16 --config sm90.bm128.bn16.bk128.s$s.c2.e0.clk2.$g.sk2.swab"; done; done
KERNTUNE_DB="$R/new16.db" timeout 200 kerntune tune --shape $S16 $N16 > "$R/tune_new16.log" 2>&1; echo "new16 rc $?"
grep -E "winner|runner" "$R/tune_new16.log"
KERNTUNE_DB="$R/old16.db" timeout 200 kerntune tune --suite decode > "$R/tune_old16.log" 2>&1; echo "decode suite rc $?"
for rep in 1 2 3; do
  for tag in old new; do
    KERNTUNE_DB="$R/$tag.db" timeout 60 kerntune bench --shape $S --rounds 8 --csv "$R/bench_${tag}_$rep.csv" > "$R/bench_${tag}_$rep.log" 2>&1
    printf '%s %s ' $tag $rep; grep -E "^gemm" "$R/bench_${tag}_$rep.log" | awk '{print $2, $(NF-3), $(NF-2), $(NF-1)}'
  done
  for tag in old16 new16; do
    KERNTUNE_DB="$R/$tag.db" timeout 60 kerntune bench --shape $S16 --rounds 8 --csv "$R/bench_${tag}_$rep.csv" > "$R/bench_${tag}_$rep.log" 2>&1
    printf '%s %s ' $tag $rep; grep -E "^gemm" "$R/bench_${tag}_$rep.log" | awk '{print $2, $(NF-3), $(NF-2), $(NF-1)}'
  done
done
show() { printf '%-8s ' "$1"; grep -E "CTAs, launch|first stage|main loop done|published|C stored" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
W=$(grep winner "$R/tune_new.log" | awk '{print $2}')
for rep in 1 2; do
  for c in sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 $W; do
    timeout 60 kerntune trace --reps 60 --shape $S --config $c > "$R/trace_${rep}_$c.log" 2>&1
    show "$c $rep" "$R/trace_${rep}_$c.log"
  done
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
