#!/usr/bin/env bash
# Session 18, call 4: sm90 stages 9 in the search (the deepest ring of 24 KB stages): the decode
# suite tuned and benched three times.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
NEW="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "new $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
KERNTUNE_DB="$R/d.db" timeout 240 $NEW tune --suite decode > "$R/dtune.log" 2>&1
echo "decode tuned at $(( $(date +%s) - t0 )) s"
for i in 1 2 3; do
  KERNTUNE_DB="$R/d.db" timeout 100 $NEW bench --suite decode --rounds 8 --csv "$R/dbench$i.csv" > "$R/dbench$i.log" 2>&1
  grep -E "^gemm" "$R/dbench$i.log" | awk '{print $1, $2, $(NF-3), $(NF-2), $(NF-1)}'
done
KERNTUNE_DB="$R/d.db" $NEW cache export "$R/dmeasurements.csv" > /dev/null 2>&1 && gzip "$R/dmeasurements.csv"
echo "done at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
