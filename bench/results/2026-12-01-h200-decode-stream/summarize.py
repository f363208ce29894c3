#!/usr/bin/env python3
"""Prints the figures of README.md from the logs in call1/ to call11/ (run from this directory)."""
import csv
import glob
import re


def phases(path):
    text = open(path).read()
    launch = re.search(r"launch ([\d.]+) us median", text)
    row = {"launch": float(launch.group(1)) if launch else None,
           "check": "ok" if "check ok" in text else "FAILED"}
    for name in ("first stage full", "main loop done", "published", "flags ready", "epoch read",
                 "C stored"):
        m = re.search(name + r"\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", text)
        if m:
            row[name] = (float(m.group(3)), float(m.group(5)))  # median, max
    return row


def fmt(row, name):
    return "%.2f / %.2f" % row[name] if name in row else "—"


print("benches (problem, config, kerntune µs, cuBLASLt µs, of copy, ratio)")
for path in sorted(glob.glob("call[1379]/*bench*.csv") + glob.glob("call1[01]/bench*.csv")):
    for r in csv.DictReader(open(path)):
        if r["problem"] == "problem":
            continue
        print("  %-24s %-17s %-48s %7.2f %7.2f %5.1f%% %.3f" % (
            path, r["problem"].split(":")[-1], r["config"], float(r["kerntune_us"]), float(r["cublaslt_us"]),
            100 * float(r["of_copy"]), float(r["ratio"])))
print("traces: launch | first stage full, main loop done, published, flags ready, epoch read, C stored"
      " (median / max µs)")
logs = glob.glob("call1/trace_*sm90*.log") + glob.glob("call[23467]/*.log")
for path in sorted(logs):
    if path.endswith(("session.log", "gpu_tests.log")) or "/bench_" in path or "/tune_" in path:
        continue
    r = phases(path)
    print("  %-62s %6.2f %-6s | %s" % (path, r["launch"] or 0, r["check"], " | ".join(
        fmt(r, n) for n in ("first stage full", "main loop done", "published", "flags ready",
                            "epoch read", "C stored"))))
