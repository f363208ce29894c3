# Summarizes call9's Nsight Compute CSVs (ncu --csv --page details, after kerntune bench's own
# output): per profiled launch, the kernel and the metrics below. Usage: python3 ncu_summary.py CSV...
import csv, io, sys

WANT = ["Duration", "Cluster Size", "Grid Size", "Block Size", "Registers Per Thread",
        "Dynamic Shared Memory Per Block", "SM Frequency", "Compute (SM) Throughput",
        "DRAM Throughput", "L2 Hit Rate", "dram__bytes_read.sum", "lts__t_bytes.sum"]
for path in sys.argv[1:]:
    lines = open(path).read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, kernels = rows[0], {}
    for row in rows[1:]:
        d = dict(zip(header, row))
        if d["Metric Name"] in WANT:
            kernels.setdefault((d["ID"], d["Kernel Name"]), {})[d["Metric Name"]] = \
                f'{d["Metric Value"]} {d["Metric Unit"]}'.strip()
    print(f"== {path}")
    for (launch, name), m in kernels.items():
        print(f"{launch} {name}")
        print("    " + "; ".join(f"{k} {m[k]}" for k in WANT if k in m))
