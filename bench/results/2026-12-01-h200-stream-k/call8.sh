#!/usr/bin/env bash
# Session 15, call 8: stream-K pieces walking K downward (every CTA's first pieces start together
# at the last k-tile, its last pieces end together at the first) against 85a59b6's upward pieces
# (.carry/s15/dist-prev) and whole units, the same tiles, benched in rotation.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
W=sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
S="4096x4096x4096 4096x3840x4096 8192x8192x8192 8192x6144x4096 8192x4096x14336 1536x1536x8192"
for s in $S; do
  KERNTUNE_DB="$R/base.db" timeout 60 .carry/s15/dist-prev/bin/kerntune tune --shape $s --config $W >> "$R/tune_base.log" 2>&1
  KERNTUNE_DB="$R/up.db" timeout 60 .carry/s15/dist-prev/bin/kerntune tune --shape $s --config $W.st >> "$R/tune_up.log" 2>&1
  KERNTUNE_DB="$R/down.db" timeout 60 dist/bin/kerntune tune --shape $s --config $W.st >> "$R/tune_down.log" 2>&1
done
grep -E "outcomes" "$R/tune_down.log" | sort | uniq -c
echo "tuned at $(( $(date +%s) - t0 )) s"
args=""; for s in $S; do args="$args --shape $s"; done
orders=("base up down" "down base up" "up down base")
for i in 0 1 2; do
  for b in ${orders[$i]}; do
    bin=.carry/s15/dist-prev/bin/kerntune; [ $b = down ] && bin=dist/bin/kerntune
    KERNTUNE_DB="$R/$b.db" timeout 90 $bin bench $args --rounds 5 --csv "$R/bench_${b}_$i.csv" > "$R/bench_${b}_$i.log" 2>&1 || echo "bench $b $i rc $?"
  done
done
echo "benched at $(( $(date +%s) - t0 )) s"
for c in $W.st; do
  timeout 60 dist/bin/kerntune trace --reps 10 --shape 1536x1536x8192 --config $c > "$R/trace_down_1536.log" 2>&1
  timeout 60 .carry/s15/dist-prev/bin/kerntune trace --reps 10 --shape 1536x1536x8192 --config $c > "$R/trace_up_1536.log" 2>&1
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
python3 - "$R" <<'PY'
import csv, glob, sys, statistics, collections
r = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sorted(glob.glob(sys.argv[1] + "/bench_*.csv")):
    b = path.rsplit("/", 1)[1].split("_")[1]
    for row in csv.DictReader(open(path)):
        if row["problem"] != "problem":
            r[row["problem"].split(":")[-1]][b].append(float(row["ratio"]))
for shape, d in r.items():
    print("%-16s " % shape + "  ".join("%s %s" % (b, " ".join("%.3f" % x for x in sorted(v))) for b, v in sorted(d.items())))
PY
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
