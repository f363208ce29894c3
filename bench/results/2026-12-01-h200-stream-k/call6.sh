#!/usr/bin/env bash
# Session 15, call 6: 8192^3 sampled: the tuner's stream-K pick and the same tile without
# stream-K, each tuned into its own database, ten benches each in alternation.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
K=dist/bin/kerntune
S=8192x8192x8192
KERNTUNE_DB="$R/base.db" timeout 60 $K tune --shape $S --config sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 > "$R/tune_base.log" 2>&1
KERNTUNE_DB="$R/sk.db" timeout 60 $K tune --shape $S --config sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st > "$R/tune_sk.log" 2>&1
echo "tuned at $(( $(date +%s) - t0 )) s"
for i in 0 1 2 3 4 5 6 7 8 9; do
  if (( i % 2 == 0 )); then order="base sk"; else order="sk base"; fi
  for b in $order; do
    KERNTUNE_DB="$R/$b.db" timeout 60 $K bench --shape $S --rounds 5 --csv "$R/bench_${b}_$i.csv" > "$R/bench_${b}_$i.log" 2>&1 || echo "bench $b $i rc $?"
  done
done
echo "benched at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
python3 - "$R" <<'PY'
import csv, glob, sys, statistics
for b in ("base", "sk"):
    v = []
    for path in sorted(glob.glob(sys.argv[1] + "/bench_%s_*.csv" % b)):
        for row in csv.DictReader(open(path)):
            if row["problem"] != "problem":
                v.append((float(row["ratio"]), float(row["kerntune_us"]), float(row["cublaslt_us"])))
    r = sorted(x[0] for x in v)
    print("%-5s ratio median %.3f [%s] kt median %.1f lt median %.1f" % (b, statistics.median(r), " ".join("%.3f" % x for x in r), statistics.median(x[1] for x in v), statistics.median(x[2] for x in v)))
PY
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
