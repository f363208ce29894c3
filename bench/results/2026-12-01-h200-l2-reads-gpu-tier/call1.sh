#!/usr/bin/env bash
# Session 12, call 1: the pairs' extra L2 traffic (session 11: Nsight's lts__t_bytes 15-30% higher
# for our cl2 pairs than for the same tiles unpaired, cuBLASLt's pairs lower). Per source unit and
# with multicast off (KT_DIAG_NOMCAST: each CTA of a pair loads both halves of B itself), at 1536^2
# and 4096^3: Nsight counters, then traces of the three variants. Then the gpu tier's GemmCorrectness
# (its kernels now compiled in parallel first), timed.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; nproc; } > "$R/session.log" 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
$NCU --query-metrics --chip gh100 > "$R/metrics.txt" 2>&1
want="gpu__time_duration sm__cycles_elapsed dram__bytes_read lts__t_bytes lts__t_sectors_srcunit_tex_op_read lts__t_sectors_srcunit_ltcfabric lts__t_requests_srcunit_tex_op_read l1tex__m_xbar2l1tex_read_bytes lts__t_sectors_srcunit_tex_op_read_lookup_hit lts__t_sectors_srcunit_tex lts__t_sectors lts__t_requests_srcunit_tex lts__t_sectors_srcnode_gpc"
M=""
for w in $want; do
  if grep -qE "^$w[[:space:]]" "$R/metrics.txt"; then
    case $w in sm__cycles_elapsed) M="$M,$w.avg.per_second,$w.max" ;; *) M="$M,$w.sum" ;; esac
  fi
done
M=${M#,}; echo "metrics: $M"
grep -iE "multicast|mcast|fabric" "$R/metrics.txt" | head -20
summ() {
python3 - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next((r for r in rows if r[0] == "ID"), None)
if not hdr: print("  (no rows)"); sys.exit()
idx = {h: i for i, h in enumerate(hdr)}
cols = [h for h in hdr if "__" in h]
for r in rows:
    if len(r) != len(hdr) or not r[0].isdigit(): continue
    out = []
    for h in cols:
        v = r[idx[h]].replace(",", "")
        try: v = float(v)
        except ValueError: continue
        name = h.replace(".sum", "").replace("lts__t_", "").replace("srcunit_", "")
        if "sectors" in h: out.append("%s %.1fMB" % (name, v * 32 / 1e6))
        elif "bytes" in h: out.append("%s %.1fMB" % (name, v / 1e6))
        elif "duration" in h: out.append("dur %.1fus" % (v / 1e3))
        elif "per_second" in h: out.append("clk %.0f" % (v / 1e6))
        elif h.endswith(".max"): out.append("cyc %.0f" % v)
        else: out.append("%s %.0f" % (name, v))
    print("  " + r[idx["Kernel Name"]][:24] + " | " + " | ".join(out))
PY
}
nct() {  # label shape config [diag]
  KT_DIAG=${4:-KT_DIAG_NONE} timeout 120 $NCU --clock-control none --kernel-name regex:'gemm_sm90' --launch-skip 1 --launch-count 2 \
    --metrics "$M" --csv --page raw $KT trace --shape $2 --config $3 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; summ "$R/ncu_$1.csv"
}
ncl() {  # label shape config: cuBLASLt's kernel
  local db="$R/n.db"
  KERNTUNE_DB="$db" timeout 90 $KT tune --shape $2 --config $3 > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 120 $NCU --clock-control none --kernel-name regex:'nvjet' --launch-skip 1 --launch-count 2 \
    --metrics "$M" --csv --page raw $KT bench --shape $2 --rounds 1 --reps 2 > "$R/ncu_$1.csv" 2> "$R/ncu_$1.err"
  echo "ncu $1 rc $?"; rm -f "$db"*; summ "$R/ncu_$1.csv"
}
C1=sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1; C2=sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1
nct s1536_cl1 1536x1536x8192 $C1
nct s1536_cl2 1536x1536x8192 $C2
nct s1536_cl2_nomcast 1536x1536x8192 $C2 KT_DIAG_NOMCAST
ncl s1536_lt 1536x1536x8192 $C1
D1=sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1; D2=sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1
nct s4096_cl1 4096x4096x4096 $D1
nct s4096_cl2 4096x4096x4096 $D2
nct s4096_cl2_nomcast 4096x4096x4096 $D2 KT_DIAG_NOMCAST
echo "== ncu done at $(( $(date +%s) - t0 )) s"
show() { printf '%-18s ' $1; grep -E "CTAs, launch|main loop done|SM clock|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //' | tr -s ' ' | cut -c1-100 | tr '\n' '|'; echo; }
for rep in 1 2; do
  for v in cl1 cl2 nomcast; do
    case $v in cl1) c=$C1 d=KT_DIAG_NONE ;; cl2) c=$C2 d=KT_DIAG_NONE ;; nomcast) c=$C2 d=KT_DIAG_NOMCAST ;; esac
    KT_DIAG=$d timeout 60 $KT trace --shape 1536x1536x8192 --config $c > "$R/tr_${v}_$rep.log" 2>&1
    show "s1536 $v $rep" "$R/tr_${v}_$rep.log"
  done
done
echo "== traces done at $(( $(date +%s) - t0 )) s"
left=$(( 560 - ($(date +%s) - t0) ))
echo "gpu tier with ${left} s"
( time timeout $left dist/libexec/kerntune/kt_tests_gpu --gtest_filter='GemmCorrectness.*' ) > "$R/gpu_tier.log" 2>&1
echo "gpu tier rc $?"
grep -E "^\[ +(OK|FAILED) +\]|PASSED|FAILED|real" "$R/gpu_tier.log" | head -40
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
