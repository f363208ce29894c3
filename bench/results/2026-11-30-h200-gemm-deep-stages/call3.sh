#!/usr/bin/env bash
# call3: bk128 enumerated for small nt tiles, the model's stage period. gpu tests, decode sweeps, decode suite tuned and benched twice, foundation suite tuned and benched.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
timeout 230 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='*Sm90TwoAtomStages*:*Sm90ShippedConfigs*:*Sm90SwapAb*' > "$R/gpu_tests.log" 2>&1
echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|Failure" "$R/gpu_tests.log" | head -20
sweep() {  # name config shapes...
  local name=$1 cfg=$2; shift 2
  export KERNTUNE_DB="$R/$name.db"
  local args=()
  for s in "$@"; do timeout 60 kerntune tune --shape "$s" --config "$cfg" >/dev/null 2>>"$R/sweep_err.log"; args+=(--shape "$s"); done
  timeout 60 kerntune bench "${args[@]}" --rounds 6 --csv "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "== $name $cfg"; grep -v "id=" "$R/$name.log" | grep -E "gemm:" | cut -c1-34,80-200
}
S16=16x4096x4096; S64=64x4096x4096
sweep a8 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g8.sk1.swab $S16
sweep a10 sm90.bm64.bn16.bk128.s10.c1.e0.cl1.g8.sk1.swab $S16
sweep a32 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 $S16
sweep b64e1 sm90.bm64.bn64.bk128.s6.c1.e1.cl1.g8.sk1 $S64
sweep b64e0 sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk1 $S64
sweep b64sw7 sm90.bm64.bn64.bk128.s7.c1.e0.cl1.g8.sk1.swab $S64
echo "sweeps done at $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r)
export KERNTUNE_DB="$R/kerntune.db"
SH="--suite decode"
timeout 100 stdbuf -oL kerntune tune $SH 2>"$R/tune_progress.log" | grep -v rejected > "$R/tune.log"
echo "tune rc=$? done at $(( $(date +%s) - t0 )) s"; grep -E "winner|runner" "$R/tune.log"
for i in 1 2; do
  timeout 40 kerntune bench $SH --rounds 8 --csv "$R/bench$i.csv" > "$R/bench$i.log" 2>&1
  grep -v "id=" "$R/bench$i.log" | grep -E "gemm:" | cut -c1-200
done
echo "decode done at $(( $(date +%s) - t0 )) s"
(cd "$OUT" && rm -f r.tgz && tar czf r.tgz r)
export KERNTUNE_DB="$R/foundation.db"
timeout 100 stdbuf -oL kerntune tune --suite foundation 2>"$R/ftune_progress.log" | grep -v rejected > "$R/ftune.log"
echo "ftune rc=$? done at $(( $(date +%s) - t0 )) s"
timeout 45 kerntune bench --suite foundation --rounds 6 --csv "$R/fbench.csv" > "$R/fbench.log" 2>&1
grep -v "id=" "$R/fbench.log" | grep -E "gemm:|geomean|mean" | cut -c1-200
echo "all done at $(( $(date +%s) - t0 )) s"
KERNTUNE_DB="$R/kerntune.db" kerntune cache export "$R/measurements.csv" >/dev/null 2>&1
KERNTUNE_DB="$R/foundation.db" kerntune cache export "$R/fmeasurements.csv" >/dev/null 2>&1
cat "$R/sweep_err.log" 2>/dev/null | grep -i "error\|invalid" | head -10
rm -f "$R"/*.db*
cd "$OUT" && rm -f r.tgz && tar czf r.tgz r && rm -rf r
