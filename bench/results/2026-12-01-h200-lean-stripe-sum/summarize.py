#!/usr/bin/env python3
"""Prints every figure of this directory's README from the logs in call1/, call2/ and call3/ (run here)."""
import csv
import glob
import gzip
import math
import re

SQUARE_8K = ["4096x4096x4096", "8192x8192x8192", "2048x2048x2048", "8192x6144x4096",
             "8192x28672x4096", "8192x4096x14336"]


def rows(path):
    return [r for r in csv.DictReader(open(path)) if r["problem"] != "problem"]


def shape(row):
    return row["problem"].split(":")[-1]


print("== call1: gpu tier")
for line in gzip.open("call1/gpu_tests.log.gz", "rt"):
    if re.match(r"\[ +(OK|FAILED|PASSED) ", line):
        print("  " + line.strip())
print("== call3: the rest of the gpu tier")
for line in gzip.open("call3/gpu_tests_rest.log.gz", "rt"):
    if re.match(r"\[ +(FAILED|PASSED) ", line):
        print("  " + line.strip())
print("== call1: 512x512x32768, old (template 13) and new (14) alternated (ratio to cuBLASLt, % of copy)")
by_config = {}
for r in rows("call1/b.csv"):
    by_config.setdefault(r["config"], []).append(r)
for config, rs in by_config.items():
    print("  %-48s us %s  ratio %s  of copy %s" % (
        config, " ".join("%.2f" % float(r["kerntune_us"]) for r in rs),
        " ".join("%.3f" % float(r["ratio"]) for r in rs),
        " ".join("%.1f%%" % (100 * float(r["of_copy"])) for r in rs)))
print("== call1: traces (median us after the first CTA's entry)")
for path in sorted(glob.glob("call1/tr_*.log.gz")):
    text = gzip.open(path, "rt").read()
    print("  %s: %s" % (path.split("/")[-1], text.splitlines()[0].split(": ", 1)[1]))
    for phase in ("first stage full", "main loop done", "published", "flags ready", "C stored"):
        m = re.search(r"^  %s\s+\d+\s+\S+\s+\S+\s+(\S+)\s+\S+\s+(\S+)" % phase, text, re.M)
        if m:
            print("    %-18s median %s max %s" % (phase, m.group(1), m.group(2)))
print("== call2: foundation and decode suites (us kerntune / cuBLASLt, ratio, % of copy)")
for path in sorted(glob.glob("call2/*bench*.csv")):
    rs = rows(path)
    print("  " + path.split("/")[-1])
    for r in rs:
        print("    %-18s %-46s %8.1f %8.1f %.3f %5.1f%%" % (
            shape(r), r["config"], float(r["kerntune_us"]), float(r["cublaslt_us"]),
            float(r["ratio"]), 100 * float(r["of_copy"])))
    sq = [float(r["ratio"]) for r in rs if shape(r) in SQUARE_8K]
    if sq:
        print("    square and 8k-token geomean %.3f (%d shapes)" % (
            math.exp(sum(map(math.log, sq)) / len(sq)), len(sq)))
