#!/usr/bin/env bash
# Session 12, call 2: does TMA multicast happen, and does cuBLASLt's cluster use it? Call 1 found
# our pairs' L2 read counters the same with multicast and without (KT_DIAG_NOMCAST). Nsight's TMA
# counters (bytes delivered to SMs by multicast and by self loads, multicast requests, TMA load
# instructions) for our unpaired and paired kernels and cuBLASLt's, at 1536^2, 4096^3, 512^2 x
# 32768 and 64 x 4096^2.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/dist/bin/kerntune"
t0=$(date +%s)
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum
M=$M,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_multicast.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_self.sum
M=$M,l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld_dest_multicast.sum,smsp__inst_executed_op_tma_ld.sum,launch__cluster_size,launch__grid_size
summ() {
python3 - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next((r for r in rows if r[0] == "ID"), None)
if not hdr: print("  (no rows)"); sys.exit()
idx = {h: i for i, h in enumerate(hdr)}
short = {"gpu__time_duration.sum": ("us", 1e-3), "sm__cycles_elapsed.avg.per_second": ("MHz", 1e-6),
         "dram__bytes_read.sum": ("dramMB", 1e-6), "lts__t_sectors_srcunit_tex_op_read.sum": ("l2rdMB", 32e-6),
         "lts__t_sectors_srcunit_ltcfabric.sum": ("fabricMB", 32e-6),
         "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum": ("tmaMB", 1e-6),
         "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_multicast.sum": ("mcastMB", 1e-6),
         "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_self.sum": ("selfMB", 1e-6),
         "l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld_dest_multicast.sum": ("mcastReq_k", 1e-3),
         "smsp__inst_executed_op_tma_ld.sum": ("tmaInst_k", 1e-3), "launch__cluster_size": ("cl", 1),
         "launch__grid_size": ("grid", 1)}
for r in rows:
    if len(r) != len(hdr) or not r[0].isdigit(): continue
    out = []
    for h, (n, s) in short.items():
        if h not in idx: continue
        try: out.append("%s %.1f" % (n, float(r[idx[h]].replace(",", "")) * s))
        except ValueError: out.append("%s %s" % (n, r[idx[h]]))
    print("  " + r[idx["Kernel Name"]][:30] + " | " + " | ".join(out))
PY
}
nct() {  # label shape config [diag]
  KT_DIAG=${4:-KT_DIAG_NONE} timeout 120 $NCU --clock-control none --kernel-name regex:'gemm_sm90' --launch-skip 1 --launch-count 1 \
    --metrics "$M" --csv --page raw $KT trace --shape $2 --config $3 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; summ "$R/ncu_$1.csv"
}
ncl() {  # label shape config: cuBLASLt's kernel (and the auxiliary kernels it launches)
  local db="$R/n.db"
  KERNTUNE_DB="$db" timeout 90 $KT tune --shape $2 --config $3 > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 120 $NCU --clock-control none --kernel-name regex:'nvjet|splitK|reduce' --launch-skip 2 --launch-count 2 \
    --metrics "$M" --csv --page raw $KT bench --shape $2 --rounds 1 --reps 2 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; rm -f "$db"*; summ "$R/ncu_$1.csv"
}
C1=sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1; C2=sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1
nct s1536_cl1 1536x1536x8192 $C1
nct s1536_cl2 1536x1536x8192 $C2
nct s1536_nomcast 1536x1536x8192 $C2 KT_DIAG_NOMCAST
ncl s1536_lt 1536x1536x8192 $C1
nct s4096_cl1 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nct s4096_cl2 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1
ncl s4096_lt 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
nct s512_sk8 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g8.sk8
nct s512_sk8cl2 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e0.cl2.g8.sk8
ncl s512_lt 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g8.sk8
nct d64_swab 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab
nct d64_cn2 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab
ncl d64_lt 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
