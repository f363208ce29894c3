#!/usr/bin/env bash
# Session 14, call 7: the TMA-store epilogue in rounds (one fence and barrier pair per round of
# kEpilogueSlots slabs) against the per-slab one, same configs (the foundation picks; the new
# build may also pick e4 s3 for 128 x 256 tiles: one round), each build tuned into its own
# database, benched alternately twice, traced.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT .carry/s14/dist-old/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
PICKS="2048x2048x2048:sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1
4096x4096x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
8192x8192x8192:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
8192x6144x4096:sm90.bm128.bn256.bk64.s3.c2.e2.cl2.g8.sk1
8192x4096x14336:sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1
4100x4096x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
1536x1536x8192:sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
64x14336x4096:sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1"
SHAPES=""
for pc in $PICKS; do
  s=${pc%%:*}; c=${pc#*:}; SHAPES="$SHAPES --shape $s"
  KERNTUNE_DB="$R/old.db" timeout 60 .carry/s14/dist-old/bin/kerntune tune --shape $s --config $c >> "$R/tune_old.log" 2>&1 || echo "tune old $s rc $?"
  extra=""; case $c in *bm128.bn256*) extra="--config $(echo $c | sed -E 's/\.s[0-9]\.c2\.e2\./.s3.c2.e4./')";; esac
  KERNTUNE_DB="$R/new.db" timeout 60 dist/bin/kerntune tune --shape $s --config $c $extra >> "$R/tune_new.log" 2>&1 || echo "tune new $s rc $?"
done
grep -E "^gemm|winner|runner" "$R/tune_new.log" | cut -c1-110
echo "tuned at $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  for b in old new; do
    bin=dist/bin/kerntune; [ $b = old ] && bin=.carry/s14/dist-old/bin/kerntune
    KERNTUNE_DB="$R/$b.db" timeout 150 $bin bench $SHAPES --rounds 5 --csv "$R/bench_${b}_$rep.csv" > "$R/bench_${b}_$rep.log" 2>&1
    echo "bench $b $rep rc $? at $(( $(date +%s) - t0 )) s"
  done
done
python3 - "$R" <<'PY'
import csv, glob, sys, collections
rows = collections.defaultdict(dict)
for path in sorted(glob.glob(sys.argv[1] + "/bench_*.csv")):
    tag = path.rsplit("/", 1)[1][6:-4]
    for r in csv.DictReader(open(path)):
        if r["problem"] != "problem":
            rows[r["problem"].split(":")[-1]][tag] = (float(r["kerntune_us"]), float(r["ratio"]), r["config"].split(".")[4:7])
for shape, d in rows.items():
    print("%-16s " % shape + "  ".join("%s %.1f %.3f %s" % (t, d[t][0], d[t][1], ".".join(d[t][2])) for t in sorted(d)))
PY
show() { printf '%-36s ' "$1"; grep -E "CTAs, launch|main loop done|C stored" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ sm90[^:]+: //' | tr -s ' ' | sed -E 's/ \(us after.*//' | cut -c1-64 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for sc in 2048x2048x2048:sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1 2048x2048x2048:sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1 4096x4096x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 4096x4096x4096:sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1 1536x1536x8192:sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1; do
    s=${sc%%:*}; c=${sc#*:}; e=$(echo $c | cut -d. -f7)
    for b in old new; do
      bin=dist/bin/kerntune; [ $b = old ] && bin=.carry/s14/dist-old/bin/kerntune
      timeout 60 $bin trace --reps 30 --shape $s --config $c > "$R/trace_${s}_${e}_${b}_$rep.log" 2>&1
      show "$s $e $b $rep" "$R/trace_${s}_${e}_${b}_$rep.log"
    done
  done
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
