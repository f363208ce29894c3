#!/usr/bin/env bash
# Session 8, call 13 (pairs along N sharing A, cn2; built from the tree committed next, whose template version stayed 10): the cn2
# correctness test on ragged shapes, then cn2 against the current picks where cuBLASLt uses
# pairs sharing that operand: 64 x 4096^2 and 64 x 14336 x 4096 (swapped 64 x 32 tiles, two
# token tiles on one weight tile) and 512^2 x 32768 (128 x 64 split 4).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
timeout 140 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.Sm90PairsAlongN*' > "$R/gpu_tests.log" 2>&1
echo "gpu test rc $? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" "$R/gpu_tests.log" | head -8
sweep() {  # name shape configs...
  local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  KERNTUNE_DB="$R/$name.db" timeout 50 kerntune tune --shape "$shape" "${args[@]}" 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
  KERNTUNE_DB="$R/$name.db" timeout 30 kerntune bench --shape "$shape" --rounds 8 --csv "$R/${name}_bench.csv" > "$R/${name}_bench.log" 2>&1
  KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
  echo "== $name at $(( $(date +%s) - t0 )) s"
  grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,7,8,9 | sort -t, -k3 -n | head -8
  cut -d, -f5,7,10,13,20 "$R/${name}_bench.csv" | tail -1
}
sweep d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1 sm90.bm64.bn32.bk64.s12.c1.e0.cn2.g1.sk1.swab \
  sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab sm90.bm64.bn32.bk64.s16.c1.e0.cn2.g1.sk1.swab sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab
sweep d14336 64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1 sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab \
  sm90.bm64.bn32.bk64.s16.c1.e0.cn2.g1.sk1.swab sm90.bm128.bn32.bk64.s8.c2.e0.cn2.g1.sk1.swab
sweep k32k 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8 sm90.bm128.bn64.bk64.s8.c2.e0.cn2.g1.sk4 \
  sm90.bm128.bn64.bk64.s8.c2.e0.cn2.g8.sk4 sm90.bm128.bn64.bk128.s4.c2.e0.cn2.g1.sk4
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "all done at $(( $(date +%s) - t0 )) s"
