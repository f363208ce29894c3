#!/usr/bin/env bash
# Session 13, call 6: a partition-aware tile placement at 1536^2 x 8192 (diag-smmap.patch).
# cuBLASLt moves 47 MB between the two L2 partitions there, our kernel 74. With one CTA on every
# SM, KT_DIAG_SMMAP gives each CTA the unit of its SM: 1 unit = %smid, 2 even/odd SMs split the
# units in halves, 3 even/odd TPCs do. With raster group 6 the halves are tile rows 0-5 and 6-11
# (A never shared across a half). If a half of the SM ids is one partition, its fabric traffic
# falls toward B's 25 MB once. Nsight's counters per variant, then traces (launch, clock).
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
    --metrics "$M" --csv --page raw $KT trace --reps 10 --shape $2 --config $3 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; summ "$R/ncu_$1.csv"
}
ncl() {  # label shape config: cuBLASLt's kernel (and the auxiliary kernels it launches)
  local db="$R/n.db"
  KERNTUNE_DB="$db" timeout 90 $KT tune --shape $2 --config $3 > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 120 $NCU --clock-control none --kernel-name regex:'nvjet|splitK|reduce' --launch-skip 2 --launch-count 2 \
    --metrics "$M" --csv --page raw $KT bench --shape $2 --rounds 1 --reps 2 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; rm -f "$db"*; summ "$R/ncu_$1.csv"
}
S=1536x1536x8192; G8=sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1; G6=sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g6.sk1
variants="g8:$G8:KT_DIAG_NONE g6:$G6:KT_DIAG_NONE g6sm:$G6:KT_DIAG_SMMAP=1 g6tpc:$G6:KT_DIAG_SMMAP=3 g6par:$G6:KT_DIAG_SMMAP=2 g8sm:$G8:KT_DIAG_SMMAP=1"
for rep in 1 2; do
  for v in $variants; do
    IFS=: read -r tag cfg diag <<< "$v"
    nct ${tag}_$rep $S $cfg $diag
  done
done
echo "== ncu done at $(( $(date +%s) - t0 )) s"
show() { printf '%-12s ' "$1"; grep -E "CTAs, launch|main loop done|SM clock|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //' | tr -s ' ' | cut -c1-100 | tr '\n' '|'; echo; }
for rep in 1 2 3; do
  for v in $variants; do
    IFS=: read -r tag cfg diag <<< "$v"
    KT_DIAG=$diag timeout 60 $KT trace --reps 60 --shape $S --config $cfg > "$R/tr_${tag}_$rep.log" 2>&1
    show "$tag $rep" "$R/tr_${tag}_$rep.log"
  done
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
