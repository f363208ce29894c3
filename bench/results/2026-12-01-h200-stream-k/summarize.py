#!/usr/bin/env python3
"""Prints every figure of this directory's README from the logs in callN/ (run from here)."""
import csv
import glob
import math
import re
import statistics

SQUARE_8K = ["4096x4096x4096", "8192x8192x8192", "2048x2048x2048", "8192x6144x4096",
             "8192x28672x4096", "8192x4096x14336"]


def rows(path):
    return [r for r in csv.DictReader(open(path)) if r["problem"] != "problem"]


def shape(row):
    return row["problem"].split(":")[-1]


def bench_table(call, names):
    print(f"== {call}: TFLOP/s kerntune / cuBLASLt, ratio")
    for name in names:
        for path in sorted(glob.glob(f"{call}/{name}.csv")):
            print("  " + path.split("/")[-1])
            for r in rows(path):
                print("    %-18s %-46s %7.1f %7.1f %.3f %5.1f%% of copy" % (shape(r), r["config"],
                      float(r["kerntune_tflops"]), float(r["cublaslt_tflops"]), float(r["ratio"]),
                      100 * float(r["of_copy"])))


def traces(call):
    for path in sorted(glob.glob(f"{call}/trace_*.log")):
        text = open(path).read()
        head = text.splitlines()[0]
        problem, config = head.split(": ")[0].split(" ")[:2]
        launch = head.split(": ", 1)[1].split(",")[1].strip()
        print("  %s (%s) %s: %s" % (problem.split(":")[-1], path.split("/")[-1], config, launch))
        for phase in ("first load issued", "main loop done", "published", "flags ready", "C stored"):
            m = re.search(r"^  %s\s+(\d+)\s+\S+\s+\S+\s+(\S+)" % phase, text, re.M)
            if m:
                print("    %-18s median %s us (%s CTAs)" % (phase, m.group(2), m.group(1)))


print("== call1: one config, TFLOP/s by fill of the last wave")
for path in sorted(glob.glob("call1/bench_*.csv")):
    print("  " + " ".join("%s %.0f/%.0f" % (shape(r), float(r["kerntune_tflops"]),
                                          float(r["cublaslt_tflops"])) for r in rows(path)))
print("== call2 and call3: checks")
for call in ("call2", "call3"):
    for line in open(f"{call}/check.log"):
        ok = "outcomes ok=1" in line
        print("  %s %s %s" % (call, "ok " if ok else "---", " ".join(line.split()[1:3])))
bench_table("call2", ["bench_base_*", "bench_sk_*"])
bench_table("call3", ["bench_base_*", "bench_sk_*"])
print("== call3 traces (KT_DIAG_LAST: the last unit's stamps)")
traces("call3")
import gzip
for call in ("call4", "call7"):
    print(f"== {call}: gpu tier")
    for line in gzip.open(f"{call}/gpu_tests.log.gz", "rt"):
        if line.startswith(("[       OK ]", "[  FAILED  ]", "[  PASSED")):
            print("  " + line.rstrip())
bench_table("call5", ["fbench*", "dbench"])
for path in sorted(glob.glob("call5/fbench*.csv")):
    ratios = {shape(r): float(r["ratio"]) for r in rows(path)}
    g = math.exp(sum(math.log(ratios[s]) for s in SQUARE_8K) / len(SQUARE_8K))
    print("  %s: square and 8k-token geomean %.3f, lowest shape %.3f" % (path, g, min(ratios.values())))
print("== call6: 8192^3, ten benches each")
for b in ("base", "sk"):
    v = [float(r["ratio"]) for p in sorted(glob.glob(f"call6/bench_{b}_*.csv")) for r in rows(p)]
    print("  %-4s median %.3f  [%s]" % (b, statistics.median(v), " ".join("%.3f" % x for x in sorted(v))))
print("== call8: ratio to cuBLASLt, whole units / stream-K pieces upward (85a59b6) / downward")
import collections
r = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sorted(glob.glob("call8/bench_*.csv")):
    b = path.split("/")[-1].split("_")[1]
    for row in rows(path):
        r[shape(row)][b].append(float(row["ratio"]))
for s, d in r.items():
    print("  %-16s " % s + "  ".join("%s %s" % (b, " ".join("%.3f" % x for x in sorted(d[b])))
                                       for b in ("base", "up", "down")))
traces("call8")
for call in ("call9",):
    print(f"== {call}: gpu tier")
    for line in gzip.open(f"{call}/gpu_tests.log.gz", "rt"):
        if line.startswith(("[       OK ]", "[  FAILED  ]", "[  PASSED")):
            print("  " + line.rstrip())
bench_table("call9", ["fbench*"])
for path in sorted(glob.glob("call9/fbench*.csv")):
    ratios = {shape(r): float(r["ratio"]) for r in rows(path)}
    g = math.exp(sum(math.log(ratios[s]) for s in SQUARE_8K) / len(SQUARE_8K))
    print("  %s: square and 8k-token geomean %.3f, lowest shape %.3f" % (path, g, min(ratios.values())))
