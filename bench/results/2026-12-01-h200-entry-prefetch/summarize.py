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
