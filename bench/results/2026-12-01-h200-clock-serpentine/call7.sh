#!/usr/bin/env bash
# Session 11, call 7: 8192^3 at the commit, four configs alternated four times (each tuned alone,
# benched beside cuBLASLt, 8 rounds): the pick (cl1 g8) against pairs (Nsight: a third fewer L2
# reads, 1% shorter) and raster group 16 (17% fewer DRAM bytes), to tell them apart from the
# power-limited shape's run-to-run spread.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
cb() {  # name config
  local db="$R/$1.db"
  KERNTUNE_DB="$db" timeout 90 kerntune tune --shape 8192x8192x8192 --config $2 > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 90 kerntune bench --shape 8192x8192x8192 --rounds 8 --csv "$R/b8192.csv" > "$R/b.log" 2>&1
  printf '%-8s ' $1; grep -E "^gemm" "$R/b.log" | awk '{print $2, $4, $5, $(NF-1)}'
  rm -f "$db"*
}
for r in 1 2 3 4; do
  cb cl1g8 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
  cb cl2g16 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g16.sk1
  cb cl1g16 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1
  cb cl2g8 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1
  echo "round $r at $(( $(date +%s) - t0 )) s"
done
rm -f "$R/b.log"
