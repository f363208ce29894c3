#!/usr/bin/env bash
# Session 7, call 5: do cluster pairs lose for want of ring depth? (the peer's release adds a remote
# round trip to every refill). Traces and per-config sweeps, cl2 at increasing depth against cl1.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
timeout 150 kerntune trace --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 \
  sm90.bm128.bn128.bk64.s7.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s7.c2.e0.cl1.g1.sk8 sm90.bm128.bn64.bk64.s9.c2.e0.cl2.g8.sk4 > "$R/trace.log" 2>&1
echo "traces at $(( $(date +%s) - t0 )) s"; grep -E "launch|main loop|first stage|C stored" "$R/trace.log" | cut -c1-150
sweep() {  # name shape configs...
  local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  KERNTUNE_DB="$R/$name.db" timeout 150 kerntune tune --shape "$shape" "${args[@]}" 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
  KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
  grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,7,8,15 | sort -t, -k3 -n
  echo "$name done at $(( $(date +%s) - t0 )) s"
}
sweep k32k 512x512x32768 sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s6.c2.e0.cl2.g1.sk8 \
  sm90.bm128.bn128.bk64.s7.c2.e0.cl2.g1.sk8 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g1.sk8 sm90.bm128.bn128.bk64.s7.c2.e0.cl1.g1.sk8 \
  sm90.bm128.bn64.bk64.s6.c2.e0.cl2.g8.sk4 sm90.bm128.bn64.bk64.s9.c2.e0.cl2.g8.sk4
sweep s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g8.sk1 \
  sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn144.bk64.s5.c2.e2.cl2.g8.sk1 sm90.bm128.bn144.bk64.s6.c2.e0.cl2.g8.sk1
sweep s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 \
  sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e0.cl2.g8.sk1
rm -f "$R"/*.db*
cd "$OUT" && tar czf r.tgz r && rm -rf r
