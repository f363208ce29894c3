#!/usr/bin/env bash
# Session 18, call 1: the pipelined stripe exchange (distributed split-K by bulk copies: stripes
# published in rotation with a flag per destination, loaded as each flag rises). (a) traces of
# 512^2 x 32768's pick, old (HEAD, dist_old) and new; (b) that pick benched beside cuBLASLt, old
# and new alternated, three passes; (c) the gpu tier's split-K tests and every shipped config on
# ragged shapes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
NEW="$PWD/dist/bin/kerntune"; OLD="$PWD/.carry/s18/dist_old/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "new $(cat dist/COMMIT) old $(cat .carry/s18/dist_old/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
show() { printf '%-14s ' $1; grep -E "CTAs, launch|main loop done|published|flags ready|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-70 | tr '\n' '|'; echo; }
S=512x512x32768; C=sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g8.sk8
for v in old new; do
  K=$([ $v = old ] && echo $OLD || echo $NEW)
  timeout 60 $K trace --per-cta --reps 20 --shape $S --config $C > "$R/tr_$v.log" 2>&1; show $v "$R/tr_$v.log"
done
echo "traces at $(( $(date +%s) - t0 )) s"
cb() {  # name binary shape config: tune that config alone, then bench it beside cuBLASLt
  KERNTUNE_DB="$R/$1.db" timeout 60 $2 tune --shape $3 --config $4 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 60 $2 bench --shape $3 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-16s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1)}'
  rm -f "$R/$1.db"*
}
for pass in 1 2 3; do
  cb old_$pass $OLD $S $C
  cb new_$pass $NEW $S $C
done
echo "benches at $(( $(date +%s) - t0 )) s"
F='GemmCorrectness.Sm90SplitKReducesInTheKernelOnRaggedShapes:GemmCorrectness.Sm90ClusterSplitKOnRaggedShapesMatchesTheL2ReductionBitwise:GemmCorrectness.Sm90SplitKRepeatedLaunchesAreCorrectAndBitwiseReproducible:GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes'
timeout 300 dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | head
gzip "$R/gpu_tests.log"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e gpu_tests.log.gz -e b.csv | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
