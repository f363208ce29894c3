#!/usr/bin/env bash
# Session 11, call 3: serpentine K against the shipped kernel with the same configs (call 2's serp
# tunes lacked their worker), interleaved ABAB, on the multi-wave foundation shapes (each bench
# checks its kernel on fresh data first).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
BASE="$PWD/dist/bin/kerntune"; SERP="$PWD/.carry/serp/kerntune"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
cb() {  # label binary name shape config
  local db="$R/$1_$3.db"
  KERNTUNE_DB="$db" timeout 90 $2 tune --shape $4 --config $5 > "$R/t_$1_$3.log" 2>&1
  KERNTUNE_DB="$db" timeout 90 $2 bench --shape $4 --rounds 8 --csv "$R/b_$1.csv" > "$R/b_$1_$3.log" 2>&1
  printf '%-5s %-18s ' $1 $3; grep -E "^gemm" "$R/b_$1_$3.log" | awk '{print $2, $3, $4, $5, $(NF-1)}'
  rm -f "$db"*
}
ab() {  # name shape config rounds
  for r in $(seq 1 $4); do
    cb base $BASE ${1}_$r $2 $3
    cb serp $SERP ${1}_$r $2 $3
  done
  echo "== $1 at $(( $(date +%s) - t0 )) s"
}
ab s8192g8 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 3
ab s8192g16 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1 3
ab s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 2
ab s4100 4100x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 2
ab k14336 8192x4096x14336 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 2
ab q6144 8192x6144x4096 sm90.bm128.bn256.bk64.s3.c2.e2.cl2.g8.sk1 2
ab q28672 8192x28672x4096 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.g8.sk1 2
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e '^b_.*csv' | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
