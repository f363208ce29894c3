#!/usr/bin/env bash
# Session 14, call 11: call 10 had the epilogue in rounds at a median 1.048 of cuBLASLt at 8192^3
# against the shipped 1.024 (six benches each). Ten more cycles of the two builds at 8192^3,
# alternating which goes first; two at 8192 x 4096 x 14336 and 8192 x 28672 x 4096.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
B=.carry/s14
for b in old rounds; do
  for sc in 8192x8192x8192:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 8192x4096x14336:sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1 8192x28672x4096:sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g8.sk1; do
    KERNTUNE_DB="$R/$b.db" timeout 60 $B/dist-$b/bin/kerntune tune --shape ${sc%%:*} --config ${sc#*:} >> "$R/tune_$b.log" 2>&1 || echo "tune $b rc $?"
  done
done
for i in 0 1 2 3 4 5 6 7 8 9; do
  o="old rounds"; [ $((i % 2)) = 1 ] && o="rounds old"
  for b in $o; do
    KERNTUNE_DB="$R/$b.db" timeout 60 $B/dist-$b/bin/kerntune bench --shape 8192x8192x8192 --rounds 5 --csv "$R/bench_${b}_$i.csv" > "$R/bench_${b}_$i.log" 2>&1 || echo "bench $b $i rc $?"
  done
done
for i in 0 1; do
  o="old rounds"; [ $i = 1 ] && o="rounds old"
  for b in $o; do
    KERNTUNE_DB="$R/$b.db" timeout 60 $B/dist-$b/bin/kerntune bench --shape 8192x4096x14336 --shape 8192x28672x4096 --rounds 5 --csv "$R/benchx_${b}_$i.csv" > "$R/benchx_${b}_$i.log" 2>&1 || echo "benchx $b $i rc $?"
  done
done
echo "benched at $(( $(date +%s) - t0 )) s"
python3 - "$R" <<'PY'
import csv, glob, sys, collections, statistics
r = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sorted(glob.glob(sys.argv[1] + "/bench*.csv")):
    b = path.rsplit("/", 1)[1].split("_")[1]
    for row in csv.DictReader(open(path)):
        if row["problem"] != "problem":
            r[row["problem"].split(":")[-1]][b].append((float(row["ratio"]), float(row["kerntune_us"]), float(row["cublaslt_us"])))
for shape, d in r.items():
    for b, v in sorted(d.items()):
        ratios = sorted(x[0] for x in v)
        print("%-16s %-7s ratio median %.3f  [%s]  kt median %.1f  lt median %.1f" % (shape, b, statistics.median(ratios), " ".join("%.3f" % x for x in ratios), statistics.median(x[1] for x in v), statistics.median(x[2] for x in v)))
PY
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
