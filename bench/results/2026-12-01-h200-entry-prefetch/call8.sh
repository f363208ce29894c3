#!/usr/bin/env bash
# Session 13, call 8: a ring one stage deeper than the enumerated ones for the decode step. The
# search enumerates 3, 4, 5, 6, 8 and 12 stages; 64 x 4096^2's pick (64 x 32, 128-deep stages of
# 24 KB) stops at 8 (192 KB) though 9 fit (216 KB). Its stream is DRAM-bound on the bytes in
# flight (6 -> 8 stages measured 14.1-14.6 -> 13.6-13.8 us). Restricted tuning of s8 and s9 (g8,
# g1), benched beside cuBLASLt and the copy twice; then traces of both, alternated.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
S=64x4096x4096
C8=sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1; C9=sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1
C8b=sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1; C9b=sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g1.sk1
for set in "s8:$C8:$C8b" "s9:$C9:$C9b"; do
  IFS=: read -r tag a b <<< "$set"
  KERNTUNE_DB="$R/$tag.db" timeout 90 kerntune tune --shape $S --config $a --config $b > "$R/tune_$tag.log" 2>&1
  echo "tuned $tag rc $? at $(( $(date +%s) - t0 )) s"
done
for rep in 1 2 3; do
  for tag in s8 s9; do
    KERNTUNE_DB="$R/$tag.db" timeout 60 kerntune bench --shape $S --rounds 8 --csv "$R/bench_${tag}_$rep.csv" > "$R/bench_${tag}_$rep.log" 2>&1
    printf '%s %s ' $tag $rep; grep -E "^gemm" "$R/bench_${tag}_$rep.log" | awk '{print $2, $(NF-3), $(NF-2), $(NF-1)}'
  done
done
show() { printf '%-8s ' "$1"; grep -E "CTAs, launch|main loop done|C stored" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for c in $C8 $C9; do
    tag=$(echo $c | cut -d. -f5)
    timeout 60 kerntune trace --reps 60 --shape $S --config $c > "$R/trace_${tag}_$rep.log" 2>&1
    show "$tag $rep" "$R/trace_${tag}_$rep.log"
  done
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
