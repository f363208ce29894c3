#!/usr/bin/env bash
# Session 17, call 2: with the lean stripe sum (template version 14), the foundation suite
# tuned once and benched twice, the decode suite tuned once and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
KERNTUNE_DB="$R/f.db" timeout 260 kerntune tune --suite foundation > "$R/ftune.log" 2> "$R/ftune_progress.log"
echo "foundation tuned rc $? at $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  KERNTUNE_DB="$R/f.db" timeout 120 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench$rep.csv" > "$R/fbench$rep.log" 2>&1
  echo "foundation bench $rep rc $? at $(( $(date +%s) - t0 )) s"
done
KERNTUNE_DB="$R/d.db" timeout 120 kerntune tune --suite decode > "$R/dtune.log" 2>&1
for rep in 1 2; do
  KERNTUNE_DB="$R/d.db" timeout 60 kerntune bench --suite decode --rounds 8 --csv "$R/dbench$rep.csv" > "$R/dbench$rep.log" 2>&1
  echo "decode bench $rep rc $? at $(( $(date +%s) - t0 )) s"
done
KERNTUNE_DB="$R/f.db" kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
KERNTUNE_DB="$R/d.db" kerntune cache export "$R/dmeasurements.csv" >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
python3 - "$R" <<'PY'
import csv, glob, math, sys
for path in sorted(glob.glob(sys.argv[1] + "/*bench*.csv")):
    rows = [r for r in csv.DictReader(open(path)) if r["problem"] != "problem"]
    print(path.rsplit("/", 1)[1])
    for r in rows:
        print("  %-18s %-46s %8.1f %8.1f %.3f %5.1f%%" % (r["problem"].split(":")[-1], r["config"], float(r["kerntune_us"]), float(r["cublaslt_us"]), float(r["ratio"]), 100 * float(r["of_copy"])))
PY
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
