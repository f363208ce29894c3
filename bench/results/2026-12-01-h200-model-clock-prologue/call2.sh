#!/usr/bin/env bash
# Session 20, call 2: the refitted model (9f06df2): the decode suite tuned afresh and benched
# twice beside cuBLASLt and the copy (export: a holdout for the fit).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/d.db"
timeout 300 $K tune --suite decode > "$R/dtune.log" 2>&1; echo "decode tune rc $? at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 120 $K bench --suite decode --rounds 6 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  grep -E "^gemm" "$R/dbench$i.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}'
done
for s in 64x4096x4096 1x4096x4096; do $K explain --shape $s > "$R/explain_$s.log" 2>&1; grep -E "^  predicted" "$R/explain_$s.log" | head -2; done
$K cache export "$R/dmeasurements.csv" > /dev/null 2>&1; gzip "$R/dmeasurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e dmeasurements | xargs rm -f)
