#!/usr/bin/env bash
# Session 11, call 4: do cluster pairs (multicast: a third fewer L2 reads at 128 x 256) raise the
# SM clock of the power-limited shapes? Nsight Compute (clocks left alone): duration, SM clock,
# cycles, DRAM and L2 bytes for unpaired and paired configs and cuBLASLt, serpentine build.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/.carry/serp/kerntune"
t0=$(date +%s)
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
nc() {  # label shape config
  local db="$R/n.db"
  KERNTUNE_DB="$db" timeout 90 $KT tune --shape $2 --config $3 > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 150 $NCU --clock-control none --kernel-name regex:'gemm_sm90|nvjet' --launch-count 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max \
    --csv --page raw $KT bench --shape $2 --rounds 1 --reps 3 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; rm -f "$db"*
  python3 - "$R/ncu_$1.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next((r for r in rows if r[0] == "ID"), None)
if hdr:
    idx = {h: i for i, h in enumerate(hdr)}
    for r in rows:
        if len(r) != len(hdr) or not r[0].isdigit(): continue
        g = lambda k: r[idx[k]].replace(",", "") if k in idx else "0"
        print("  %-40s dur %8.1f us  clk %6.0f MHz  cycles %9.0f  dram %7.1f MB  l2 %8.1f MB" % (
            g("Kernel Name")[:40], float(g("gpu__time_duration.sum")) / 1e3,
            float(g("sm__cycles_elapsed.avg.per_second")) / 1e6, float(g("sm__cycles_elapsed.max")),
            float(g("dram__bytes_read.sum")) / 1e6, float(g("lts__t_bytes.sum")) / 1e6))
PY
}
nc s1536_cl1 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
nc s1536_cl2 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1
nc s1536_cl2s6e1 1536x1536x8192 sm90.bm128.bn144.bk64.s6.c2.e1.cl2.g8.sk1
nc s8192_cl1g16 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1
nc s8192_cl2g16 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g16.sk1
nc s4096_cl1 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nc s4096_cl2 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
