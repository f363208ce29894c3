#!/usr/bin/env bash
# Session 18, call 2: the model's reduction tails after the stream (stream-K's fix-up and cluster
# split-K's exchange added to the larger of compute and memory). (a) 64 x 14336 and 64 x 28672 x
# 4096: the old model's pick, the new model's pick and the swapped 128 x 64 tile, each tuned alone
# and benched beside cuBLASLt, two passes; (b) the decode suite ranked by each model alone (`tune
# --predict`, what a fleet database gets without a GPU) and benched; (c) the decode suite tuned
# with the new model and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
NEW="$PWD/dist/bin/kerntune"; OLD="$PWD/.carry/s18/dist_old/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "new $(cat dist/COMMIT) old $(cat .carry/s18/dist_old/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
cb() {  # name shape config: tune that config alone, then bench it beside cuBLASLt
  KERNTUNE_DB="$R/$1.db" timeout 90 $NEW tune --shape $2 --config $3 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 90 $NEW bench --shape $2 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-22s %-50s ' $1 $3; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1)}'
  rm -f "$R/$1.db"*
}
for pass in 1 2; do
  cb up14_old_$pass 64x14336x4096 sm90.bm64.bn128.bk64.s4.c1.e2.cl1.g1.sk1.st
  cb up14_new_$pass 64x14336x4096 sm90.bm64.bn128.bk64.s5.c1.e2.cl1.g1.sk1
  cb up14_swab_$pass 64x14336x4096 sm90.bm128.bn64.bk64.s5.c2.e0.cl1.g1.sk1.swab
  cb up28_old_$pass 64x28672x4096 sm90.bm64.bn128.bk64.s4.c1.e2.cl1.g1.sk1.st
  cb up28_new_$pass 64x28672x4096 sm90.bm64.bn256.bk64.s4.c1.e2.cl1.g1.sk1
  cb up28_swab_$pass 64x28672x4096 sm90.bm128.bn64.bk64.s5.c2.e0.cl1.g1.sk1.swab
done
echo "configs at $(( $(date +%s) - t0 )) s"
for v in old new; do
  K=$([ $v = old ] && echo $OLD || echo $NEW)
  KERNTUNE_DB="$R/p_$v.db" timeout 150 $K tune --suite decode --predict > "$R/ptune_$v.log" 2>&1
  KERNTUNE_DB="$R/p_$v.db" timeout 120 $NEW bench --suite decode --rounds 8 --csv "$R/pbench_$v.csv" > "$R/pbench_$v.log" 2>&1
  echo "predict-only $v at $(( $(date +%s) - t0 )) s"; grep -E "^gemm" "$R/pbench_$v.log" | awk '{print $1, $2, $(NF-3), $(NF-2), $(NF-1)}'
done
KERNTUNE_DB="$R/d.db" timeout 200 $NEW tune --suite decode > "$R/dtune.log" 2>&1
echo "decode tuned at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  KERNTUNE_DB="$R/d.db" timeout 100 $NEW bench --suite decode --rounds 8 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  grep -E "^gemm" "$R/dbench$i.log" | awk '{print $1, $2, $(NF-3), $(NF-2), $(NF-1)}'
done
KERNTUNE_DB="$R/d.db" $NEW cache export "$R/dmeasurements.csv" > /dev/null 2>&1 && gzip "$R/dmeasurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
