#!/usr/bin/env bash
# Session 21, call 3: what the decode line allows. launchbench (beside this script): an empty
# kernel, the bench's copy and 32-MB read-only kernels, each timed after an L2 flush as the bench
# times; then 64 x 4096^2's pick tuned alone and benched twice for reference, in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
for i in 1 2; do timeout 120 .carry/s21/launchbench > "$R/launch$i.log" 2>&1; cat "$R/launch$i.log"; done
export KERNTUNE_DB="$R/k.db"
timeout 90 $K tune --shape 64x4096x4096 --config sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g1.sk1.swab > "$R/t.log" 2>&1
for i in 1 2; do
  timeout 90 $K bench --shape 64x4096x4096 --rounds 8 --csv "$R/b$i.csv" > "$R/b$i.log" 2>&1
  grep -E "^gemm" "$R/b$i.log"; tail -n 1 "$R/b$i.csv"
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
