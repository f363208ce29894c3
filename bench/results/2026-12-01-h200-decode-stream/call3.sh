#!/usr/bin/env bash
# Session 14, call 3: the TMA-store epilogue per warp (16-row boxes, no barrier over the
# warpgroup) against the shipped one (named barriers around each slab), same configs: each build
# tuned on the foundation picks alone, benched alternately twice, traced; then the gpu tier's
# epilogue tests on the new build.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; cat dist/COMMIT .carry/s14/dist-old/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
PICKS="2048x2048x2048:sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1
4096x4096x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
8192x8192x8192:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
8192x6144x4096:sm90.bm128.bn256.bk64.s3.c2.e2.cl2.g8.sk1
8192x28672x4096:sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g8.sk1
8192x4096x14336:sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1
4100x4096x4096:sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
1536x1536x8192:sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
64x14336x4096:sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1"
SHAPES=""
for b in old new; do
  bin=dist/bin/kerntune; [ $b = old ] && bin=.carry/s14/dist-old/bin/kerntune
  for pc in $PICKS; do
    s=${pc%%:*}; c=${pc#*:}
    KERNTUNE_DB="$R/$b.db" timeout 60 $bin tune --shape $s --config $c >> "$R/tune_$b.log" 2>&1 || echo "tune $b $s rc $?"
  done
done
for pc in $PICKS; do SHAPES="$SHAPES --shape ${pc%%:*}"; done
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
            rows[r["problem"].split(":")[-1]][tag] = (float(r["kerntune_us"]), float(r["ratio"]))
for shape, d in rows.items():
    print("%-18s " % shape + "  ".join("%s %.1f %.3f" % (t, *d[t]) for t in sorted(d)))
PY
show() { printf '%-40s ' "$1"; grep -E "CTAs, launch|main loop done|C stored" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ sm90[^:]+: //' | tr -s ' ' | sed -E 's/ \(us after.*//' | cut -c1-70 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for pc in $(echo "$PICKS" | grep -E "^(2048|4096x|1536)"); do
    s=${pc%%:*}; c=${pc#*:}
    for b in old new; do
      bin=dist/bin/kerntune; [ $b = old ] && bin=.carry/s14/dist-old/bin/kerntune
      timeout 60 $bin trace --reps 30 --shape $s --config $c > "$R/trace_${s}_${b}_$rep.log" 2>&1
      show "$s $b $rep" "$R/trace_${s}_${b}_$rep.log"
    done
  done
done
echo "perf done at $(( $(date +%s) - t0 )) s"
F='GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmCorrectness.Sm90WritesFp32AndMixedOutputs:GemmCorrectness.Sm90ClustersWithOddTileRowsAndTails:GemmCorrectness.Sm90PersistentWavesWalkKBothWays:GemmCorrectness.Sm90PairsAlongNOnRaggedShapes:GemmCorrectness.RaggedShapesEveryDtypeBothLayoutsModelDefault'
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]" "$R/gpu_tests.log" | head -12
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
