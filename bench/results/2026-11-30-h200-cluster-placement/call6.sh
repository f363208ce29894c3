#!/usr/bin/env bash
# Session 8, call 6: the hardware spreads cl1 CTAs over the GPCs with a period of 16 (CTAs b and
# b + 16 share a GPC, call 2). With raster group g, unit u lies in tile row u % g of its group, so
# for g | 16 (1, 2, 4, 8, 16) a GPC's CTAs all read the same two A row blocks; g = 6, 7, 12 give
# each GPC different rows. Same configs, raster groups swept (no code change: g is a config field).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
sweep() {  # name shape base(with GG) groups...
  local name=$1 shape=$2 base=$3; shift 3
  local args=(); for g in "$@"; do args+=(--config "${base/GG/g$g}"); done
  KERNTUNE_DB="$R/$name.db" timeout 150 kerntune tune --shape "$shape" "${args[@]}" 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
  KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
  echo "== $name at $(( $(date +%s) - t0 )) s"
  grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,8,9,16 | sort -t, -k2 -n | cut -d, -f1-3
}
sweep q6144 8192x6144x4096 sm90.bm128.bn256.bk64.s3.c2.e2.cl1.GG.sk1 8 6 7 12 5
sweep s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.GG.sk1 8 6 7 12 5
sweep s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e2.cl1.GG.sk1 8 1 6 7 5
sweep s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.GG.sk1 8 1 6 7 5 3
sweep q28672 8192x28672x4096 sm90.bm128.bn256.bk64.s3.c2.e2.cl1.GG.sk1 8 6 7 12
sweep s8192 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.GG.sk1 8 6 7 12
sweep s8192cl2 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.GG.sk1 8 6 14 16
rm -f "$R"/*.db*
echo "done at $(( $(date +%s) - t0 )) s"
