#!/usr/bin/env bash
# Session 8, call 9: what cuBLASLt runs, and where both kernels spend the time. Nsight Compute
# (clocks left alone) on `kerntune bench` of a predict-only pick: every launch of our kernel and
# of cuBLASLt's (names, grid, cluster, duration, SOL, memory traffic).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
echo "ncu: $NCU"; $NCU --version | tail -1
export KERNTUNE_DB="$R/p.db"
for s in 1536x1536x8192 512x512x32768 64x4096x4096 4096x4096x4096; do
  kerntune tune --predict --shape $s 2>/dev/null | grep -E "winner" | sed "s/^/$s /"
  timeout 200 $NCU --clock-control none --kernel-name regex:'gemm_sm90|nvjet|xmma|cutlass' --launch-count 6 \
    --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --section Occupancy \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__cycles_active.avg,smsp__cycles_active.avg \
    --csv --page details kerntune bench --shape $s --rounds 1 --reps 2 > "$R/ncu_$s.csv" 2> "$R/ncu_$s.err"
  echo "== $s rc $? at $(( $(date +%s) - t0 )) s"
  grep -E '"(Kernel Name|gpu__time_duration.sum|Duration|Grid Size|Cluster Size|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit Rate|Registers Per Thread|Dynamic Shared Memory Per Block)"' "$R/ncu_$s.csv" | head -0
  python3 - "$R/ncu_$s.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = None
for r in rows:
    if r and r[0] == "ID": hdr = r; continue
    if hdr is None or len(r) != len(hdr): continue
    d = dict(zip(hdr, r))
    name = d.get("Kernel Name", "")[:60]
    if d.get("Metric Name") in ("Duration", "Grid Size", "Cluster Size", "Compute (SM) Throughput", "Memory Throughput",
                                "DRAM Throughput", "L2 Hit Rate", "dram__bytes_read.sum", "lts__t_bytes.sum", "Registers Per Thread",
                                "Dynamic Shared Memory Per Block", "Block Size", "SM Frequency"):
        print(d["ID"], name, d["Metric Name"], d["Metric Value"], d["Metric Unit"])
PY
done
rm -f "$R"/p.db*
echo "done at $(( $(date +%s) - t0 )) s"
