#!/usr/bin/env bash
# Session 16, call 1: (a) the gpu tier's stream-K and shipped-config tests at the review commit
# (b7563bf: validate requires the FP32 tile in the ring, the fallback removed, the peers' bound);
# (b) 64 x 4096^2 with 64 x 64 tiles split 2 through L2 and 128-deep stages (A's L2 reads halved:
# 32 MB instead of 64 MB into the SMs), beside the shipped 64 x 32 pick, benched ABAB, traced.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
F='GemmCorrectness.Sm90StreamKOnRaggedShapes:GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes'
timeout 300 dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | head
gzip "$R/gpu_tests.log"
S=64x4096x4096
show() { printf '%-14s ' $1; grep -E "CTAs, launch|first stage full|main loop done|C stored|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-70 | tr '\n' '|'; echo; }
tr1() { timeout 60 kerntune trace --per-cta --reps 20 --shape $S --config $2 > "$R/tr_$1.log" 2>&1; show $1 "$R/tr_$1.log"; }
tr1 bn32 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1
tr1 bn64sk2 sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk2
tr1 bn64sk2sw sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk2.swab
echo "traces at $(( $(date +%s) - t0 )) s"
cb() {  # name config: tune that config alone, then bench it beside cuBLASLt
  KERNTUNE_DB="$R/$1.db" timeout 60 kerntune tune --shape $S --config $2 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 60 kerntune bench --shape $S --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-16s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1)}'
  rm -f "$R/$1.db"*
}
for pass in 1 2 3; do
  cb bn32_$pass sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1
  cb bn64sk2_$pass sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk2
  cb bn64sk2sw_$pass sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk2.swab
  cb bn64k256_$pass sm90.bm64.bn64.bk256.s3.c1.e0.cl1.g8.sk2
done
echo "benches at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e gpu_tests.log.gz -e b.csv | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
