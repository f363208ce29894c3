"""The runtime's dispatch of untuned shapes, replayed offline: a database holding a foundation
export (`kerntune cache export` of the suite's tune, its rows moved to this build's template
version), each shape of a per-shape tune's export dispatched from it by `kerntune explain`, and
each choice timed by that tune's own measurement of the config. Prints, per shape and in sum, the
fastest measured time over that of the chain's pick and over the best that benchmark mode's N
candidates (`explain --benchmark N`) hold among those the tune measured: a bound on what benchmark
mode finds, since it times the unmeasured ones too. GEMM exports (bench/gemm_unseen.sh's
foundation_measurements.csv.gz and measurements.csv.gz).
Usage: python3 bench/dispatch_replay.py KERNTUNE FOUNDATION MEASUREMENTS [--benchmark N]
Python's standard library only."""
import argparse
import collections
import csv
import gzip
import json
import re
import subprocess
import tempfile


def rows_of(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", newline="") as f:
        yield from csv.DictReader(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kerntune")
    ap.add_argument("foundation")
    ap.add_argument("measurements")
    ap.add_argument("--benchmark", type=int, default=8)
    a = ap.parse_args()
    times = collections.defaultdict(dict)
    for r in rows_of(a.measurements):
        if r["kind"] == "measurement" and r["status"] == "ok":
            t = times[r["problem_key"]]
            t[r["config_key"]] = min(float(r["median_us"]), t.get(r["config_key"], float("inf")))
    with tempfile.TemporaryDirectory() as tmp:
        rows = list(rows_of(a.foundation))
        ops = subprocess.run([a.kerntune, "ops"], capture_output=True, text=True, check=True)
        current = re.search(r"gemm:\.\.\.\s+\(template version (\d+)\)", ops.stdout).group(1)
        with open(f"{tmp}/f.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            for r in rows:
                w.writerow({**r, "template_version": current})
        subprocess.run([a.kerntune, "cache", "import", f"{tmp}/f.csv", "--db", f"{tmp}/f.db"],
                       check=True, capture_output=True)
        layouts = {problem.split(":")[3] for problem in times}
        if len(layouts) != 1:
            ap.error(f"{a.measurements} holds layouts {sorted(layouts)}: replay one at a time")
        args = [a.kerntune, "explain", "--db", f"{tmp}/f.db", "--benchmark", str(a.benchmark),
                "--json", "--layout", layouts.pop()]
        for problem in times:
            args += ["--shape", problem.split(":")[4]]
        out = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    picks, bests = [], []
    for p in out["problems"]:
        t = times[p["problem"]]
        fastest = min(t.values())
        pick = p["dispatch"]["config"]
        candidates = [b["config"] for b in p["dispatch"]["benchmark"]] or [pick]
        known = [t[c] for c in candidates if c in t]
        pick_ratio = fastest / t[pick] if pick in t else float("nan")
        best_ratio = fastest / min(known) if known else float("nan")
        picks.append(pick_ratio)
        bests.append(best_ratio)
        print(f"{p['problem']:42} pick {pick_ratio:.3f}  best of {a.benchmark} {best_ratio:.3f} "
              f"({len(known)} of {len(candidates)} measured)")
    within = lambda ratios: sum(r >= 0.95 for r in ratios)
    print(f"{len(picks)} shapes within 5% of the tune: the chain's pick {within(picks)} "
          f"({sum(r != r for r in picks)} unmeasured), benchmark mode's best of {a.benchmark} at "
          f"least {within(bests)}")


if __name__ == "__main__":
    main()
