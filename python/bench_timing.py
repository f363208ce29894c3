"""What the python/bench_*.py scripts share: a call's median GPU time over repetitions that each
start with L2 flushed (triton.testing.do_bench zeroes a buffer larger than L2 before every
repetition and brackets the call with CUDA events), the CSV they write, and the summary of
speed ratios (worst case and geometric mean) their tables end with."""
import csv
import math

from triton.testing import do_bench


def median_us(fn, warmup_ms=25, rep_ms=100):
    """fn's median time in µs: do_bench calls it for about warmup_ms, then times about rep_ms of
    calls, each behind an L2 flush."""
    return do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median") * 1e3


def write_csv(path, rows):
    """rows (dicts with the same keys, in column order) as a CSV file with a header."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def ratio_summary(name, ratios):
    """'vs NAME: min R, geomean G over N cases' over the finite ratios (a backend that refused a
    case leaves NaN), or None when there are none."""
    finite = [r for r in ratios if r == r and math.isfinite(r)]
    if not finite:
        return None
    return (f"vs {name}: min {min(finite):.3f}, geomean {geomean(finite):.3f} over "
            f"{len(finite)} cases")
