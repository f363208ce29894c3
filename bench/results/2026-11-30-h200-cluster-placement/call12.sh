#!/usr/bin/env bash
# Session 8, call 12 (01db6c4 kernels and model; 1b5982c docs): the foundation suite tuned with the
# model's cluster term (its search order changed) and benched twice more beside cuBLASLt.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
export KERNTUNE_DB="$R/foundation.db"
timeout 250 stdbuf -oL kerntune tune --suite foundation 2>"$R/ftune_progress.log" | grep -v rejected > "$R/ftune.log"
echo "ftune rc=$? done at $(( $(date +%s) - t0 )) s"
grep -E "winner" "$R/ftune.log" | cut -c1-120
for i in 1 2; do timeout 75 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench$i.csv" > "$R/fbench$i.log" 2>&1; grep -E "geomean|geometric" "$R/fbench$i.log"; done
kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "all done at $(( $(date +%s) - t0 )) s"
