#!/usr/bin/env bash
# Session 11, call 5: the pairs' L2 traffic (call 4: Nsight's lts__t_bytes rose 25-30% with
# multicast where cuBLASLt's pairs carry less than our unpaired tiles). Does the tensor maps' L2
# promotion (256 B shipped; none, 64, 128 by KT_DIAG_L2_PROMOTION in the diagnostic build) change
# it, and the time? 1536^2 cl1 / cl2 and 4096^3 cl1 / cl2: Nsight, then benches beside cuBLASLt.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/.carry/diag2/kerntune"
t0=$(date +%s)
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
nc() {  # label shape config
  local db="$R/n.db"
  KERNTUNE_DB="$db" timeout 90 $KT tune --shape $2 --config $3 > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 150 $NCU --clock-control none --kernel-name regex:'gemm_sm90|nvjet' --launch-count 4 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_elapsed.avg.per_second \
    --csv --page raw $KT bench --shape $2 --rounds 1 --reps 2 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"
  python3 - "$R/ncu_$1.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next((r for r in rows if r[0] == "ID"), None)
if hdr:
    idx = {h: i for i, h in enumerate(hdr)}
    for r in rows:
        if len(r) != len(hdr) or not r[0].isdigit(): continue
        g = lambda k: r[idx[k]].replace(",", "") if k in idx and r[idx[k]] not in ("", "n/a") else "0"
        print("  %-28s dur %8.1f us  clk %5.0f  dram %7.1f MB  l2 %8.1f MB  tex-rd %8.1f MB" % (
            g("Kernel Name")[:28], float(g("gpu__time_duration.sum")) / 1e3,
            float(g("sm__cycles_elapsed.avg.per_second")) / 1e6,
            float(g("dram__bytes_read.sum")) / 1e6, float(g("lts__t_bytes.sum")) / 1e6,
            float(g("lts__t_sectors_srcunit_tex_op_read.sum")) * 32 / 1e6))
PY
  KERNTUNE_DB="$db" timeout 60 $KT bench --shape $2 --rounds 8 > "$R/b_$1.log" 2>&1
  printf '   bench %-22s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-1)}'
  rm -f "$db"*
}
for promo in 256 none 128; do
  export KT_DIAG_L2_PROMOTION=$promo
  nc s1536_cl1_$promo 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
  nc s1536_cl2_$promo 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1
done
for promo in 256 none; do
  export KT_DIAG_L2_PROMOTION=$promo
  nc s4096_cl1_$promo 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
  nc s4096_cl2_$promo 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
