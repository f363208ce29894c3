#!/usr/bin/env bash
# Session 8, call 7: two-atom stages (bk128: half the barrier round trips per FLOP) on the
# one-wave 128 x 144 tile of 1536^2 x 8192 and the 128 x 256 tile of 4096^3, against the bk64 picks.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
sweep() {  # name shape configs...
  local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  KERNTUNE_DB="$R/$name.db" timeout 150 kerntune tune --shape "$shape" "${args[@]}" 2>"$R/${name}_progress.log" | grep -v rejected > "$R/${name}_tune.log"
  KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
  echo "== $name at $(( $(date +%s) - t0 )) s"
  grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,7,8,9 | sort -t, -k3 -n
}
sweep s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 sm90.bm128.bn144.bk128.s2.c2.e2.cl1.g8.sk1 \
  sm90.bm128.bn144.bk128.s3.c2.e0.cl1.g8.sk1 sm90.bm128.bn144.bk64.s6.c2.e0.cl1.g8.sk1
sweep s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 \
  sm90.bm128.bn256.bk128.s2.c2.e2.cl1.g8.sk1 sm90.bm128.bn256.bk128.s2.c2.e0.cl1.g8.sk1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls *.log *.csv) && rm -f "$R"/*.db* "$R"/*.log "$R"/*.csv
echo "done at $(( $(date +%s) - t0 )) s"
