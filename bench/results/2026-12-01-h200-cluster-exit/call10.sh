#!/usr/bin/env bash
# Session 10, call 10: the change as committed (pairs: producer tail, no barrier at exit; split-K
# pairs keep a __syncwarp()). Traces of cl1 against the pairs; the gpu tier's pair tests; the
# foundation suite tuned and benched twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
show() { printf '%-4s ' $1; grep -E "CTAs, launch|first stage full|main loop done|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-90 | tr '\n' '|'; echo; }
for spec in "s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1" \
            "s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g1.sk1 sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g1.sk1" \
            "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1"; do
  set -- $spec; name=$1 shape=$2 c1=$3 c2=$4
  for rep in 1 2; do
    timeout 60 kerntune trace --per-cta --shape $shape --config $c1 > "$R/${name}_cl1_$rep.log" 2>&1
    timeout 60 kerntune trace --per-cta --shape $shape --config $c2 > "$R/${name}_cl2_$rep.log" 2>&1
    show cl1 "$R/${name}_cl1_$rep.log"; show cl2 "$R/${name}_cl2_$rep.log"
  done
done
echo "traces at $(( $(date +%s) - t0 )) s"
timeout 150 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90ClustersWithOddTileRowsAndTails:GemmCorrectness.Sm90PairsAlongNOnRaggedShapes:GemmCorrectness.Sm90NarrowTilesInClusterPairs:GemmTraceTest.*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$R/gpu_tests.log" | head -12
KERNTUNE_DB="$R/f.db" timeout 160 kerntune tune --suite foundation > "$R/ftune.log" 2> "$R/ftune_progress.log"
echo "foundation tuned rc $? at $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  KERNTUNE_DB="$R/f.db" timeout 40 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench$r.csv" > "$R/fbench$r.log" 2>&1
  echo "== foundation bench $r at $(( $(date +%s) - t0 )) s"; grep -E "^gemm|geometric" "$R/fbench$r.log" | awk '{print $1, $2, $(NF-1), $NF}'
done
KERNTUNE_DB="$R/f.db" kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
