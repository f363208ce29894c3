#!/usr/bin/env bash
# Session 12, call 9: why 64-deep stages stream a decode step slower than 128-deep ones in our
# kernel (64 x 4096^2 swapped 64 x 32: bk64 s12 15.1 us against bk128 s8 13.5 in earlier tunes)
# while cuBLASLt's 64-deep ring (16 stages) is faster than both. Nsight: DRAM bytes and activity,
# L2 misses, TMA bytes, for bk64 s12/s16, bk128 s8, bk256 s4 and cuBLASLt.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
KT="$PWD/dist/bin/kerntune"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__cycles_active_read.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,smsp__inst_executed_op_tma_ld.sum
summ() {
python3 - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
hdr = next((r for r in rows if r[0] == "ID"), None)
if not hdr: print("  (no rows)"); sys.exit()
idx = {h: i for i, h in enumerate(hdr)}
for r in rows:
    if len(r) != len(hdr) or not r[0].isdigit(): continue
    g = lambda k: float(r[idx[k]].replace(",", "")) if k in idx and r[idx[k]] not in ("", "n/a") else float("nan")
    print("  %-30s | us %.2f | MHz %.0f | dram %.1f MB | dram thr %.1f%% | dram rd active %.1f%% | l2rd %.1f MB | l2 miss %.1f MB | tma inst %.0f" % (
        r[idx["Kernel Name"]][:30], g("gpu__time_duration.sum") / 1e3, g("sm__cycles_elapsed.avg.per_second") / 1e6,
        g("dram__bytes_read.sum") / 1e6, g("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        g("dram__cycles_active_read.avg.pct_of_peak_sustained_elapsed"),
        g("lts__t_sectors_srcunit_tex_op_read.sum") * 32e-6, g("lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum") * 32e-6,
        g("smsp__inst_executed_op_tma_ld.sum")))
PY
}
t0=$(date +%s)
for rep in 1 2; do
  for c in bk64.s12 bk64.s16 bk128.s8 bk256.s4; do
    cfg=sm90.bm64.bn32.${c%%.*}.${c##*.}.c1.e0.cl1.g1.sk1.swab
    timeout 90 $NCU --clock-control none --kernel-name regex:'gemm_sm90' --launch-skip 2 --launch-count 1 \
      --metrics "$M" --csv --page raw $KT trace --shape 64x4096x4096 --config $cfg > "$R/ncu_${c}_$rep.csv" 2> "$R/ncu_${c}_$rep.err"
    echo "$c $rep rc $?"; summ "$R/ncu_${c}_$rep.csv"
  done
  db="$R/n.db"
  KERNTUNE_DB="$db" timeout 90 $KT tune --shape 64x4096x4096 --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab > /dev/null 2>&1
  KERNTUNE_DB="$db" timeout 90 $NCU --clock-control none --kernel-name regex:'nvjet' --launch-skip 2 --launch-count 1 \
    --metrics "$M" --csv --page raw $KT bench --shape 64x4096x4096 --rounds 1 --reps 2 > "$R/ncu_lt_$rep.csv" 2> "$R/ncu_lt_$rep.err"
  echo "lt $rep rc $?"; rm -f "$db"*; summ "$R/ncu_lt_$rep.csv"
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
