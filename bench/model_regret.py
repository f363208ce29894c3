"""How well an op's model (GEMM's by default, RMSNorm's or attention's, forward or backward) picks
among configs the GPU measured,
offline: for each problem of a measurements export (`kerntune cache export`, plain or .gz), the
config the model ranks first among those measured, and its measured time over the fastest
measured (the regret). Asks the given kerntune for each prediction (`explain --config K --json`,
no GPU, no database), so it judges the model of that build against measurements from any run.
With --top N also how many problems hold a config within 2% of the fastest among the model's
first N of those measured (what a default tune, which measures the model's first 24, can find).
With --neighbours EXPORT (RMSNorm) the candidates of each problem are only the configs another
export's tuned problems measured within 3% of their fastest, from problems of the same residual
flag and a hidden within 2x (what tuned neighbours could offer an untuned shape); it also prints
the best of those candidates over the fastest (the oracle's regret).
Usage: python3 bench/model_regret.py KERNTUNE MEASUREMENTS
       [--op gemm|rmsnorm|attention|attention-backward] [--worst N] [--top N] [--neighbours EXPORT]
       [--device-profile h200|h100-sxm|...] (the card to model; default: explain's, the GPU
       present or the h200)
Prints the geomean regret, how many problems are within 2% and 5%, and the worst picks.
Python's standard library only."""
import argparse
import collections
import csv
import gzip
import json
import math
import re
import subprocess
import tempfile


# The problem keys' op field of each --op.
KEY_OP = {"gemm": "gemm", "rmsnorm": "rmsnorm", "attention": "attn", "attention-backward": "attnbwd"}


def measured(path, op):
    opener = gzip.open if path.endswith(".gz") else open
    times = collections.defaultdict(dict)
    with opener(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            if (r["kind"] == "measurement" and r["status"] == "ok"
                    and r["problem_key"].startswith(KEY_OP[op] + ":")):
                times[r["problem_key"]][r["config_key"]] = float(r["median_us"])
    return times


def rmsnorm_shape(problem):
    """Rows, hidden and the residual flag of an RMSNorm problem key (rmsnorm:bf16:rR.hH[.res])."""
    rows, hidden = re.match(r"r(\d+)\.h(\d+)", problem.split(":")[2]).groups()
    return int(rows), int(hidden), problem.endswith(".res")


def attention_args(problem):
    """`kerntune explain` options of an attention key (attn|attnbwd:DT:bB.hqH.hkvH.sqN.skN.dD
    [.causal][.det]); None for a packed varlen batch, whose key names no shape."""
    op, dtype, body = problem.split(":")
    fields = body.split(".")
    sizes = dict(re.match(r"([a-z]+)(\d+)$", f).groups() for f in fields if re.match(r"[a-z]+\d+$", f))
    if set(sizes) != {"b", "hq", "hkv", "sq", "sk", "d"}:
        return None
    shape = ",".join(f"{k}={sizes[k]}" for k in ("b", "hq", "hkv", "sq", "sk", "d"))
    return (["--op", "attention" if op == "attn" else "attention-backward", "--dtype", dtype,
             "--shape", shape] + (["--causal"] if "causal" in fields else []) +
            (["--deterministic"] if "det" in fields else []))


def explain_args(problem):
    """`kerntune explain` options naming a problem key (gemm:bf16:bf16:nt:MxNxK,
    rmsnorm:bf16:rR.hH[.res] or an attention key)."""
    fields = problem.split(":")
    if fields[0] == "gemm":
        return ["--shape", fields[4], "--layout", fields[3]]
    if fields[0] in ("attn", "attnbwd"):
        return attention_args(problem)
    rows, hidden, residual = rmsnorm_shape(problem)
    return (["--op", "rmsnorm", "--dtype", fields[1], "--shape", f"rows={rows},hidden={hidden}"] +
            (["--residual"] if residual else []))


def neighbour_offers(problem, neighbours):
    """The configs the neighbours of an RMSNorm problem measured within 3% of their fastest."""
    _, hidden, residual = rmsnorm_shape(problem)
    offers = set()
    for other, times in neighbours.items():
        _, h, res = rmsnorm_shape(other)
        if res == residual and hidden / 2 <= h <= 2 * hidden:
            best = min(times.values())
            offers.update(k for k, t in times.items() if t <= 1.03 * best)
    return offers


def predicted_us(kerntune, problem, config, db, profile):
    """The model's time, or None where this build's validate() rejects the config."""
    out = subprocess.run([kerntune, "explain", *explain_args(problem), "--config", config, "--json",
                          "--db", db] + (["--device-profile", profile] if profile else []),
                         capture_output=True, text=True)
    if out.returncode != 0:
        if "invalid" not in out.stderr:
            raise RuntimeError(f"kerntune explain {problem} {config}: {out.stderr.strip()}")
        return None
    return json.loads(out.stdout)["problems"][0]["configs"][0]["predicted_us"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kerntune")
    ap.add_argument("measurements")
    ap.add_argument("--op", choices=list(KEY_OP), default="gemm")
    ap.add_argument("--worst", type=int, default=5)
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--neighbours")
    ap.add_argument("--device-profile",
                    help="the card to model (`kerntune explain --help` lists them); default: "
                         "the GPU present, else the h200")
    a = ap.parse_args()
    if a.neighbours and a.op != "rmsnorm":
        ap.error("--neighbours takes RMSNorm exports only")
    neighbours = measured(a.neighbours, a.op) if a.neighbours else None
    regrets = []
    oracle = []
    covered = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/none.db"  # never created: explain reads no calibration
        for problem, times in sorted(measured(a.measurements, a.op).items()):
            if explain_args(problem) is None:
                continue
            # The fastest of all measured; the pick among the candidates this build's model
            # accepts.
            best = min(times.values())
            candidates = times
            if neighbours is not None:
                offers = neighbour_offers(problem, neighbours)
                candidates = {k: t for k, t in times.items() if k in offers}
                if not candidates:
                    continue
                oracle.append(min(candidates.values()) / best)
            predicted = {k: predicted_us(a.kerntune, problem, k, db, a.device_profile)
                         for k in candidates}
            ranked = sorted((k for k in candidates if predicted[k] is not None), key=predicted.get)
            regrets.append((times[ranked[0]] / best, problem, ranked[0]))
            covered += any(times[k] <= 1.02 * best for k in ranked[:a.top])
    geomean = math.exp(sum(math.log(r[0]) for r in regrets) / len(regrets))
    print(f"{len(regrets)} problems: geomean regret {geomean:.4f}, within 2% "
          f"{sum(r[0] <= 1.02 for r in regrets)}, within 5% {sum(r[0] <= 1.05 for r in regrets)}")
    if a.top:
        print(f"a config within 2% of the fastest in the model's first {a.top}: {covered} of "
              f"{len(regrets)}")
    if oracle:
        print(f"the neighbours' best offer: geomean regret "
              f"{math.exp(sum(map(math.log, oracle)) / len(oracle)):.4f}, within 2% "
              f"{sum(r <= 1.02 for r in oracle)} of {len(oracle)}")
    for regret, problem, pick in sorted(regrets, reverse=True)[:a.worst]:
        print(f"  {regret:.3f} {problem} {pick}")


if __name__ == "__main__":
    main()
