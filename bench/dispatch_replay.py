"""The runtime's dispatch of untuned problems, replayed offline against measured times.

Replay: a database holding a foundation export (`kerntune cache export` of the suite's tune),
each problem of a per-shape tune's export dispatched from it by `kerntune explain`, and each
choice timed by that tune's own measurement of the config (bench/gemm_unseen.sh's
foundation_measurements.csv.gz and measurements.csv.gz).
Leave-one-out (--leave-one-out): each tuned problem of one export dispatched from a database of
the export's other rows, as if it had not been tuned.

Rows are moved to this build's template version of their op first. Prints, per problem and in
sum, the fastest measured time over that of the chain's pick and over the best that benchmark
mode's N candidates (`explain --benchmark N`) hold among those measured: a bound on what
benchmark mode finds, since it times the unmeasured ones too. Any op.
Usage: python3 bench/dispatch_replay.py KERNTUNE FOUNDATION MEASUREMENTS [--benchmark N]
       python3 bench/dispatch_replay.py KERNTUNE --leave-one-out EXPORT [--benchmark N]
       [--device-profile h200|h100-sxm|...] (the card the exports come from; default h200)
       [--detail] (under each problem: the pick and the fastest measured config, with their times)
Python's standard library only."""
import argparse
import collections
import csv
import gzip
import json
import math
import re
import subprocess
import sys
import tempfile


def rows_of(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", newline="") as f:
        yield from csv.DictReader(f)


def ops_by_prefix(kerntune):
    """{key prefix: (op name, this build's template version)} from `kerntune ops`."""
    text = subprocess.run([kerntune, "ops"], capture_output=True, text=True, check=True).stdout
    out, op = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            op = line.strip()
        m = re.match(r"\s+keys\s+(\S+?)\.\.\.\s+\(template version (\d+)\)", line)
        if m:
            out[m.group(1)] = (op, m.group(2))
    return out


def op_of(problem, ops):
    for prefix, op in ops.items():
        if problem.startswith(prefix):
            return op
    sys.exit(f"{problem}: no op of this kerntune has that key prefix ({', '.join(ops)})")


def measured_times(rows):
    """{problem: {config: fastest median measured}}."""
    times = collections.defaultdict(dict)
    for r in rows:
        if r["kind"] == "measurement" and r["status"] == "ok":
            t = times[r["problem_key"]]
            t[r["config_key"]] = min(float(r["median_us"]), t.get(r["config_key"], math.inf))
    return times


def database(kerntune, rows, ops, path):
    """`path` holding `rows`, moved to this build's template versions."""
    with open(path + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({**r, "template_version": op_of(r["problem_key"], ops)[1]})
    subprocess.run([kerntune, "cache", "import", path + ".csv", "--db", path], check=True,
                   capture_output=True)


def dispatch(kerntune, db, problems, ops, benchmark, profile):
    """explain's `problems` entries for `problems` (keys of one op) dispatched from `db` as on the
    built-in device `profile` (the rows' fingerprint must be that card's)."""
    args = [kerntune, "explain", "--op", op_of(problems[0], ops)[0], "--db", db, "--json",
            "--benchmark", str(benchmark), "--device-profile", profile]
    for problem in problems:
        args += ["--shape", problem]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["problems"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kerntune")
    ap.add_argument("foundation", nargs="?")
    ap.add_argument("measurements", nargs="?")
    ap.add_argument("--leave-one-out", metavar="EXPORT")
    ap.add_argument("--benchmark", type=int, default=8)
    ap.add_argument("--device-profile", default="h200",
                    help="the card the exports were measured on (`kerntune explain --help` lists them)")
    ap.add_argument("--detail", action="store_true",
                    help="print the pick's and the fastest config's keys and times under each problem")
    a = ap.parse_args()
    if bool(a.leave_one_out) == bool(a.foundation and a.measurements):
        ap.error("give FOUNDATION and MEASUREMENTS, or --leave-one-out EXPORT")
    ops = ops_by_prefix(a.kerntune)
    dispatched = []
    with tempfile.TemporaryDirectory() as tmp:
        if a.leave_one_out:
            rows = list(rows_of(a.leave_one_out))
            times = measured_times(rows)
            for i, problem in enumerate(times):
                db = f"{tmp}/loo{i}.db"
                database(a.kerntune, [r for r in rows if r["problem_key"] != problem], ops, db)
                dispatched += dispatch(a.kerntune, db, [problem], ops, a.benchmark,
                                       a.device_profile)
        else:
            times = measured_times(rows_of(a.measurements))
            database(a.kerntune, list(rows_of(a.foundation)), ops, f"{tmp}/f.db")
            by_op = collections.defaultdict(list)
            for problem in times:
                by_op[op_of(problem, ops)[0]].append(problem)
            for problems in by_op.values():
                dispatched += dispatch(a.kerntune, f"{tmp}/f.db", problems, ops, a.benchmark,
                                       a.device_profile)
    picks, bests = [], []
    for p in dispatched:
        t = times[p["problem"]]
        fastest = min(t.values())
        pick = p["dispatch"]["config"]
        candidates = [b["config"] for b in p["dispatch"]["benchmark"]] or [pick]
        known = [t[c] for c in candidates if c in t]
        pick_ratio = fastest / t[pick] if pick in t else float("nan")
        best_ratio = fastest / min(known) if known else float("nan")
        picks.append(pick_ratio)
        bests.append(best_ratio)
        print(f"{p['problem']:50} pick {pick_ratio:.3f}  best of {a.benchmark} {best_ratio:.3f} "
              f"({len(known)} of {len(candidates)} measured)")
        if a.detail:
            best = min(t, key=t.get)
            shown = f"{t[pick]:.1f} us" if pick in t else "unmeasured"
            print(f"    pick    {pick} ({p['dispatch']['grade']}): {shown}\n"
                  f"    fastest {best}: {t[best]:.1f} us")
    within = lambda ratios: sum(r >= 0.95 for r in ratios)
    measured = [r for r in picks if r == r]
    geomean = math.exp(sum(map(math.log, measured)) / len(measured)) if measured else float("nan")
    print(f"{len(picks)} problems within 5% of the tune: the chain's pick {within(picks)} "
          f"({len(picks) - len(measured)} unmeasured; geomean of the measured picks {geomean:.3f}), "
          f"benchmark mode's best of {a.benchmark} at least {within(bests)}")


if __name__ == "__main__":
    main()
