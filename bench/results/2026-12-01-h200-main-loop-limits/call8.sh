#!/usr/bin/env bash
# Session 9, call 8: 1536^2 x 8192 with cuBLASLt's ring depth (its pair kernel has 6 stages):
# 128 x 144 with 6 stages and one epilogue slot a consumer (e1 fits 228 KB), unpaired and in
# pairs, against the known best (s4/s5 e2). Tuned with --config, the winner benched.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log"
sweep() { local name=$1 shape=$2; shift 2
  local args=(); for c in "$@"; do args+=(--config "$c"); done
  KERNTUNE_DB="$R/$name.db" timeout 120 kerntune tune --shape "$shape" "${args[@]}" 2>"$R/${name}_progress.log" > "$R/${name}_tune.log"
  KERNTUNE_DB="$R/$name.db" timeout 60 kerntune bench --shape "$shape" --rounds 8 --csv "$R/${name}_bench.csv" > "$R/${name}_bench.log" 2>&1
  KERNTUNE_DB="$R/$name.db" kerntune cache export "$R/${name}_measurements.csv" >/dev/null 2>&1
  echo "== $name at $(( $(date +%s) - t0 )) s"
  grep -E "^measurement" "$R/${name}_measurements.csv" | cut -d, -f6,7,8 | sort -t, -k3 -n
  grep -E "^gemm" "$R/${name}_bench.log" | awk '{print $1, $2, $4, $5, $(NF-1)}'
}
P=sm90.bm128.bn144.bk64
for rep in 1 2; do
sweep s1536_$rep 1536x1536x8192 $P.s4.c2.e2.cl1.g8.sk1 $P.s5.c2.e2.cl1.g1.sk1 $P.s6.c2.e1.cl1.g8.sk1 $P.s6.c2.e1.cl1.g1.sk1 \
  $P.s6.c2.e1.cl2.g8.sk1 $P.s6.c2.e1.cl2.g1.sk1 $P.s5.c2.e1.cl2.g8.sk1 $P.s5.c2.e2.cl2.g8.sk1
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
