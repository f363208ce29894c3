#!/usr/bin/env bash
# Session 22, call 4: at the commit with configs without warp specialization in the space and the
# model's fitted stage period for them: the foundation and decode suites tuned afresh and benched
# twice beside cuBLASLt and the copy; the export.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/k.db"
timeout 200 $K tune --suite foundation > "$R/ftune.log" 2>&1; echo "foundation tune rc $? at $(( $(date +%s) - t0 )) s"
timeout 150 $K tune --suite decode > "$R/dtune.log" 2>&1; echo "decode tune rc $? at $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 100 $K bench --suite foundation --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1
  timeout 60 $K bench --suite decode --rounds 6 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  grep -E "^gemm" "$R/fbench$i.log" "$R/dbench$i.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}' | sed 's/.*log://'
done
$K cache ls > "$R/winners.txt" 2>&1
$K cache export "$R/measurements.csv" > /dev/null 2>&1; gzip "$R/measurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e measurements -e 'bench.\.csv' | xargs rm -f)
