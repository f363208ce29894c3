#!/usr/bin/env bash
# Session 10, call 7: pairs end with the producer tail instead of a cluster barrier (working tree
# on 1399be8). The gpu tier's cluster and pair tests; traces of cl1 against the pairs; the
# foundation suite tuned and benched.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
timeout 240 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90ClustersWithOddTileRowsAndTails:GemmCorrectness.Sm90PairsAlongNOnRaggedShapes:GemmCorrectness.Sm90NarrowTilesInClusterPairs:GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmTraceTest.*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$R/gpu_tests.log" | head -12
show() { printf '%-5s ' $1; grep -E "CTAs, launch|first stage full|main loop done|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
for spec in "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1" \
            "s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g1.sk1 sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g1.sk1" \
            "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1" \
            "k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8" \
            "d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab"; do
  set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
  for rep in 1 2; do
    timeout 60 kerntune trace --per-cta --shape $shape --config $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    timeout 60 kerntune trace --per-cta --shape $shape --config $c2 > "$R/${name}_cl2_$rep.log" 2>&1
    show cl1 "$R/${name}_cl1_$rep.log"; show cl2 "$R/${name}_cl2_$rep.log"
  done
done
echo "traces at $(( $(date +%s) - t0 )) s"
KERNTUNE_DB="$R/f.db" timeout 200 kerntune tune --suite foundation > "$R/ftune.log" 2> "$R/ftune_progress.log"
echo "foundation tuned rc $? at $(( $(date +%s) - t0 )) s"
KERNTUNE_DB="$R/f.db" timeout 120 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench1.csv" > "$R/fbench1.log" 2>&1
echo "== foundation bench at $(( $(date +%s) - t0 )) s"; grep -E "^gemm|geometric" "$R/fbench1.log" | awk '{print $1, $2, $(NF-1), $NF}'
cp "$R/f.db" "$R/f.sqlite" 2>/dev/null
KERNTUNE_DB="$R/f.db" kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db-* "$R/f.db"
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls | grep -v f.sqlite) && (cd "$R" && ls | grep -v -e logs.tgz -e f.sqlite | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
