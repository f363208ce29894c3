#!/usr/bin/env bash
# Session 12, call 4: the gpu tier at 0c22bdc but GemmCorrectness (which call 1 ran at the same
# test code: 16 tests, 462 s), then the partition fabric and L2 reads of 1536^2's single wave
# under each raster group (the order decides only which SM holds which tile there), against
# cuBLASLt's 47 MB of fabric traffic (call 2).
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
cat dist/COMMIT
( time timeout 400 dist/libexec/kerntune/kt_tests_gpu --gtest_filter='-GemmCorrectness.*' ) > "$R/gpu_rest.log" 2>&1
echo "gpu rest rc $?"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|tests ran|real" "$R/gpu_rest.log" | head -60
echo "== tier done at $(( $(date +%s) - t0 )) s"
for g in 1 2 3 4 6 8 12; do
  nct s1536_g$g 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g$g.sk1
done
for g in 1 2 4 8 16; do
  nct s4096_g$g 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g$g.sk1
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
