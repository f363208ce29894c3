#!/usr/bin/env bash
# Session 9, call 2: the kernel's last TMA stores waited for their global writes before the CTA
# exits (cp.async.bulk.wait_group 0); CUTLASS-style kernels wait only for the shared-memory
# reads (.read). A = HEAD (.carry/base), B = dist (the change). Same picks, ABAB benches.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
declare -A PICK=(
 [1536x1536x8192]=sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g1.sk1
 [2048x2048x2048]=sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g1.sk1
 [4096x4096x4096]=sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
 [512x512x32768]=sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8
 [64x14336x4096]=sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1 )
SH=(1536x1536x8192 2048x2048x2048 4096x4096x4096 512x512x32768 64x14336x4096)
bin() { [ $1 = A ] && echo .carry/base/kerntune || echo dist/bin/kerntune; }
for v in A B; do
  for s in "${SH[@]}"; do KERNTUNE_DB="$R/$v.db" timeout 60 $(bin $v) tune --shape $s --config ${PICK[$s]} >> "$R/tune_$v.log" 2>&1; done
  echo "tuned $v at $(( $(date +%s) - t0 )) s"
done
args=(); for s in "${SH[@]}"; do args+=(--shape $s); done
for r in 1 2; do for v in A B; do
  KERNTUNE_DB="$R/$v.db" timeout 120 $(bin $v) bench "${args[@]}" --rounds 6 --csv "$R/bench_$v.csv" > "$R/bench_${v}_$r.log" 2>&1
  echo "== bench $v $r at $(( $(date +%s) - t0 )) s"; grep -E "^gemm" "$R/bench_${v}_$r.log" | awk '{print $1, $4, $5, $(NF-1)}'
done; done
for r in 1 2; do for v in A B; do for s in 1536x1536x8192 2048x2048x2048; do
  timeout 60 $(bin $v) trace --shape $s --config ${PICK[$s]} > "$R/trace_${v}_${s}_$r.log" 2>&1
  echo "trace $v $s: $(grep -E 'CTAs, launch' "$R/trace_${v}_${s}_$r.log" | grep -oE 'launch [0-9.]+ us median')"
done; done; done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
