#!/usr/bin/env python3
"""Per shape and variant: launch median, first load and first stage (CTA median), C stored (max)."""
import collections
import glob
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def phase(text, name):
    m = re.search(name + r"\s+\d+" + r"\s+([\d.]+)" * 5, text)
    return [float(x) for x in m.groups()]


for call in ("call1", "call2"):
    rows = collections.OrderedDict()
    for path in sorted(glob.glob(os.path.join(HERE, call, "*.log"))):
        shape, variant, _ = os.path.basename(path)[:-4].rsplit("_", 2)
        text = open(path).read()
        launch = float(re.search(r"launch ([\d.]+) us median", text).group(1))
        rows.setdefault((shape, variant), []).append(
            (launch, phase(text, "first load issued")[2], phase(text, "first stage full")[2],
             phase(text, "C stored")[4]))
    print(call)
    for (shape, variant), runs in rows.items():
        cols = ["/".join("%.2f" % r[i] for r in runs) for i in range(4)]
        print(f"  {shape:7s} {variant:10s} launch {cols[0]:12s} load {cols[1]:10s} "
              f"full {cols[2]:10s} stored(max) {cols[3]}")

# Calls 3 and 4: cycles per 64-deep k-tile of the main loop (first stage full to main loop done,
# CTA medians, at the SMs' measured clock) against the wgmma peak (2048 BF16 FMA a clock an SM).
for call in ("call3", "call4"):
    print(call)
    for path in sorted(glob.glob(os.path.join(HERE, call, "*.log"))):
        name = os.path.basename(path)[:-4]
        text = open(path).read()
        m = re.search(r"(\d+)x(\d+)x(\d+) sm90\.bm(\d+)\.bn(\d+)\.bk(\d+)\..*\.sk(\d+)", text)
        if not m:
            continue
        _, _, k, tm, tn, _, sk = (int(x) for x in m.groups())
        loop = phase(text, "main loop done")[2] - phase(text, "first stage full")[2]
        mhz = float(re.search(r"SM clock, entry to main loop done: (\d+) MHz", text).group(1))
        k_tiles = k // sk // 64
        cycles = loop * mhz / k_tiles
        peak = tm * tn * 64 / 2048
        launch = float(re.search(r"launch ([\d.]+) us median", text).group(1))
        print(f"  {name:62s} launch {launch:7.2f} us  {cycles:6.0f} cycles/k-tile "
              f"(peak {peak:4.0f}, {100 * peak / cycles:3.0f}%) at {mhz:.0f} MHz")
