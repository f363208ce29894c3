#!/usr/bin/env bash
# Session 6, call 12: splits in cluster pairs with stages several atoms deep (not enumerated yet) on the decode shapes, against the current picks.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$R/session.log" 2>&1
sweep() {  # name shape configs...
  local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  KERNTUNE_DB="$R/$name.db" timeout 100 kerntune tune --shape "$shape" "${args[@]}" 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
  KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
  grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,7,8,15 | sort -t, -k3 -n
  KERNTUNE_DB="$R/$name.db" timeout 40 kerntune bench --shape "$shape" --rounds 8 --csv "$R/${name}_bench.csv" > "$R/${name}_bench.log" 2>&1
  grep -E "gemm:" "$R/${name}_bench.log" | grep -v "id=" | cut -c1-200
  echo "$name done at $(( $(date +%s) - t0 )) s"
}
sweep m64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 \
  sm90.bm64.bn64.bk128.s6.c1.e0.clk2.g8.sk2 sm90.bm64.bn64.bk128.s6.c1.e0.clk2.g8.sk2.swab sm90.bm64.bn64.bk128.s5.c1.e0.clk2.g8.sk2.swab \
  sm90.bm64.bn64.bk256.s3.c1.e0.clk2.g8.sk2 sm90.bm64.bn64.bk256.s3.c1.e0.clk2.g8.sk2.swab sm90.bm64.bn64.bk64.s6.c1.e0.clk2.g8.sk2.swab
sweep m16 16x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g1.sk1.swab sm90.bm64.bn16.bk256.s5.c1.e0.clk2.g8.sk2.swab \
  sm90.bm64.bn16.bk128.s8.c1.e0.clk2.g8.sk2.swab sm90.bm64.bn32.bk256.s4.c1.e0.clk2.g8.sk2.swab sm90.bm64.bn16.bk64.s8.c1.e0.clk2.g8.sk2.swab
sweep m1 1x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g1.sk1.swab sm90.bm64.bn16.bk256.s5.c1.e0.clk2.g8.sk2.swab \
  sm90.bm64.bn16.bk128.s8.c1.e0.clk2.g8.sk2.swab
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
