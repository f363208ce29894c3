#!/usr/bin/env bash
# Session 11, call 2: serpentine K (odd waves walk K downward, so a wave starts on the K slices
# the last one read most recently) against the shipped kernel, raster groups 8 and 16, on the
# multi-wave foundation shapes, each config tuned alone and benched beside cuBLASLt, ABBA; then
# Nsight Compute's DRAM bytes and SM clock for both kernels and cuBLASLt at 8192^3 and 4096^3.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
BASE="$PWD/dist/bin/kerntune"; SERP="$PWD/.carry/serp/kerntune"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; } > "$R/session.log" 2>&1
cb() {  # binary-label binary name shape config
  local db="$R/$1_$3.db"
  KERNTUNE_DB="$db" timeout 90 $2 tune --shape $4 --config $5 > "$R/t_$1_$3.log" 2>&1
  KERNTUNE_DB="$db" timeout 90 $2 bench --shape $4 --rounds 8 --csv "$R/b_$1.csv" > "$R/b_$1_$3.log" 2>&1
  printf '%-5s %-24s ' $1 $3; grep -E "^gemm" "$R/b_$1_$3.log" | awk '{print $2, $3, $4, $5, $(NF-1)}'
  rm -f "$db"*
}
for spec in "s8192 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.GG.sk1" \
            "s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.GG.sk1" \
            "q6144 8192x6144x4096 sm90.bm128.bn256.bk64.s3.c2.e2.cl2.GG.sk1" \
            "q28672 8192x28672x4096 sm90.bm128.bn256.bk64.s3.c2.e4.cl1.GG.sk1" \
            "k14336 8192x4096x14336 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.GG.sk1"; do
  set -- $spec; name=$1 shape=$2 base=$3
  for g in g8 g16; do
    c=${base/GG/$g}
    cb base $BASE ${name}_${g}_1 $shape $c
    cb serp $SERP ${name}_${g}_1 $shape $c
    cb serp $SERP ${name}_${g}_2 $shape $c
    cb base $BASE ${name}_${g}_2 $shape $c
  done
  echo "== $name at $(( $(date +%s) - t0 )) s"
done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
nc() {  # label binary shape config
  local db="$R/n.db"
  KERNTUNE_DB="$db" timeout 90 $2 tune --shape $3 --config $4 > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 150 $NCU --clock-control none --kernel-name regex:'gemm_sm90|nvjet' --launch-count 4 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second \
    --csv --page raw $2 bench --shape $3 --rounds 1 --reps 2 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; rm -f "$db"*
  python3 - "$R/ncu_$1.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next((r for r in rows if r[0] == "ID"), None)
if hdr:
    idx = {h: i for i, h in enumerate(hdr)}
    for r in rows:
        if r[0] in ("ID", "") or len(r) != len(hdr) or not r[0].isdigit(): continue
        g = lambda k: r[idx[k]] if k in idx else "?"
        print(" ", g("Kernel Name")[:40], "dur", g("gpu__time_duration.sum"), "dram_rd", g("dram__bytes_read.sum"),
              "l2", g("lts__t_bytes.sum"), "clk", g("sm__cycles_elapsed.avg.per_second"))
PY
}
nc s8192_base_g8 $BASE 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nc s8192_base_g16 $BASE 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1
nc s8192_serp_g16 $SERP 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1
nc s8192_serp_g8 $SERP 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nc s4096_base_g8 $BASE 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nc s4096_serp_g16 $SERP 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1
echo "ncu done at $(( $(date +%s) - t0 )) s"
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e '^b_.*csv' | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
