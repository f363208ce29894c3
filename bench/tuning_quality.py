"""Tuning quality and speed per op on seeded shapes no suite holds (bench/tuning_quality.sh runs it
with dist/ on PATH). For each shape:
  cold     `kerntune tune` (the default search) into a database holding no cubins, only the
           calibration export's measurements: the tune time a user meets first;
  warm     the same again into that database (every cubin cached): measurement alone;
  wide     `kerntune tune --search wide` (gemm: the model's top --wide-top configs; attention:
           every valid config) into a shared database: the reference;
  versus   when the two picks differ, both timed side by side (`--config A --config B
           --finalists 2`: interleaved re-measurement), so the gap is free of clock drift.
Spearman's rho of the model's times (calibrated, as the tuner ranked) against the measured
medians is taken over each run's first-pass rows (`kerntune cache export`). Writes
tuning_quality.csv, runs.jsonl (each tune's JSON) and measurements.csv (the cold, warm and wide
runs' rows, for `kerntune cache import` and `kerntune report`) into the results folder and prints the
table and a summary per op. Python's standard library only."""
import argparse
import csv
import gzip
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The exports the model is calibrated with: every candidate the H200 measured for the GEMM
# foundation and decode suites and the BF16 attention suites.
CALIBRATION = [
    os.path.join(HERE, "results/2026-12-02-h200-gemm-suites/measurements.csv.gz"),
    os.path.join(HERE, "results/2026-12-03-h200-attention-splitkv-varlen/measurements_bf16.csv"),
]
FINALIST_DETAIL = "finalist: interleaved re-measurement"
COLUMNS = ["op", "shape", "default_pick", "default_us", "wide_pick", "wide_us", "gap_pct",
           "gap_source", "measured_default", "stopped_early_default", "measured_wide",
           "spearman_default", "spearman_wide", "cold_s", "cold_tune_s", "cold_compile_s",
           "cold_compile_cpu_s", "cold_measure_s", "cold_wait_s", "cold_setup_s",
           "compiled_ahead", "ahead_used", "warm_s", "warm_measure_s", "wide_s"]


def shapes(op, count):
    """(label, kerntune arguments) of the op's seeded unseen shapes."""
    if count <= 0:
        return []
    script = {"gemm": "gemm_unseen_shapes.py", "attention": "attention_unseen_shapes.py"}[op]
    lines = subprocess.run([sys.executable, os.path.join(HERE, script), "--count", str(count)],
                           check=True, capture_output=True, text=True).stdout.split("\n")
    out = []
    for line in filter(None, lines):
        shape, *flags = line.split()
        out.append((line, ["--op", op, "--shape", shape] + ["--" + f for f in flags]))
    return out


def tune(db, args, log, extra=()):
    """One `kerntune tune --json` run: (the problem's JSON, wall seconds of the process)."""
    cmd = ["kerntune", "tune", "--db", db, "--json", "--retune", *args, *extra]
    start = time.monotonic()
    with open(log, "a") as progress:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=progress, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}); see {log}")
    return json.loads(done.stdout)["problems"][0], wall


def exported_rows(db, out, keep=()):
    """The measured first-pass rows of a database, by run id: [(predicted_us, median_us)]. Rows
    of the runs in `keep` (every kind) are appended to out/measurements.csv, the export that
    `kerntune cache import` and `kerntune report` take."""
    path = os.path.join(out, "export.csv")
    subprocess.run(["kerntune", "cache", "export", "--db", db, "--force", path], check=True,
                   stdout=subprocess.DEVNULL)
    runs = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if keep:
            kept = os.path.join(out, "measurements.csv")
            new = not os.path.exists(kept)
            with open(kept, "a", newline="") as dest:
                w = csv.DictWriter(dest, fieldnames=reader.fieldnames)
                if new:
                    w.writeheader()
                w.writerows(r for r in reader if r["run_id"] in keep)
            f.seek(0)
            reader = csv.DictReader(f)
        for r in reader:
            if r["kind"] != "measurement" or r["status"] != "ok" or r["detail"] == FINALIST_DETAIL:
                continue
            if r["median_us"] and r["predicted_us"]:
                runs.setdefault(r["run_id"], []).append(
                    (float(r["predicted_us"]), float(r["median_us"])))
    os.remove(path)
    return runs


def ranks(values):
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(pairs):
    """Spearman's rho of the model's times against the measured ones; None under 3 pairs."""
    if len(pairs) < 3:
        return None
    x, y = ranks([p for p, _ in pairs]), ranks([m for _, m in pairs])
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def calibration_db(out, files, log):
    """A database holding only the calibration exports' rows (no cubins)."""
    db = os.path.join(out, "calibration.db")
    for f in files:
        with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as plain:
            with (gzip.open(f, "rb") if f.endswith(".gz") else open(f, "rb")) as src:
                shutil.copyfileobj(src, plain)
        with open(log, "a") as progress:
            subprocess.run(["kerntune", "cache", "import", "--db", db, plain.name], check=True,
                           stdout=progress, stderr=progress)
        os.remove(plain.name)
    return db


def copy_db(src, dst):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(dst + suffix):
            os.remove(dst + suffix)
    if src and os.path.exists(src):
        shutil.copy(src, dst)
        if os.path.exists(src + "-wal"):
            shutil.copy(src + "-wal", dst + "-wal")


def remove_db(path):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def fmt(value, digits=1):
    if value is None or value == "":
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def one_shape(op, label, args, a, dbs, rows_out):
    log = os.path.join(a.out, "tune_progress.log")
    cold_db = os.path.join(a.out, "cold.db")
    copy_db(dbs["calibration"], cold_db)
    cold, cold_wall = tune(cold_db, args, log)
    warm, warm_wall = tune(cold_db, args, log)
    cold_rows = exported_rows(cold_db, a.out, keep={cold["run_id"], warm["run_id"]})
    remove_db(cold_db)
    wide_args = ["--search", "wide"] + (["--candidates", str(a.wide_top)] if op == "gemm" else [])
    wide, wide_wall = tune(dbs["wide"], args, log, wide_args)
    with open(os.path.join(a.out, "runs.jsonl"), "a") as runs:
        for kind, doc in (("cold", cold), ("warm", warm), ("wide", wide)):
            runs.write(json.dumps({"op": op, "shape": label, "kind": kind, "tune": doc}) + "\n")
    pick, best = cold["winner"], wide["winner"]
    row = {"op": op, "shape": label, "default_pick": pick["config"], "default_us": pick["us"],
           "wide_pick": best["config"], "wide_us": best["us"]}
    if pick["config"] == best["config"]:
        row["gap_pct"], row["gap_source"] = 0.0, "same"
    else:
        versus, _ = tune(dbs["wide"], args, log,
                         ["--config", pick["config"], "--config", best["config"], "--finalists",
                          "2"])
        times = {c["config"]: c["us"] for c in (versus["winner"], versus["runner_up"]) if c}
        if len(times) == 2:
            row["gap_pct"] = 100 * (times[pick["config"]] / min(times.values()) - 1)
            row["gap_source"] = "side by side"
            row["default_us"], row["wide_us"] = times[pick["config"]], times[best["config"]]
        else:
            row["gap_pct"] = 100 * max(0.0, pick["us"] / best["us"] - 1)
            row["gap_source"] = "first passes"
    row.update({
        "measured_default": cold["timing"]["measured"],
        "stopped_early_default": cold["timing"]["stopped_early"],
        "measured_wide": wide["timing"]["measured"],
        "spearman_default": spearman(cold_rows.get(cold["run_id"], [])),
        "cold_s": cold_wall, "cold_tune_s": cold["timing"]["wall_s"],
        "cold_compile_s": cold["timing"]["compile_s"],
        "cold_compile_cpu_s": cold["timing"]["compile_cpu_s"],
        "cold_measure_s": cold["timing"]["measure_s"], "cold_wait_s": cold["timing"]["wait_s"],
        "cold_setup_s": cold["timing"]["setup_s"],
        "compiled_ahead": cold["timing"]["compiled_ahead"],
        "ahead_used": cold["timing"]["ahead_used"], "warm_s": warm_wall,
        "warm_measure_s": warm["timing"]["measure_s"], "wide_s": wide_wall,
        "wide_run_id": wide["run_id"]})
    rows_out.append(row)
    print(f"{op:9} {label:44} gap {row['gap_pct']:5.2f}% ({row['gap_source']}), "
          f"measured {row['measured_default']}/{row['measured_wide']}, cold {cold_wall:.1f}s "
          f"(compile {row['cold_compile_s']:.1f}, measure {row['cold_measure_s']:.1f}), "
          f"warm {warm_wall:.1f}s, wide {wide_wall:.1f}s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--gemm", type=int, default=12, help="GEMM shapes (gemm_unseen_shapes.py)")
    ap.add_argument("--attention", type=int, default=6,
                    help="attention shapes (attention_unseen_shapes.py)")
    ap.add_argument("--wide-top", type=int, default=160,
                    help="the GEMM wide search's candidates: the model's top N")
    ap.add_argument("--calibration", nargs="*", default=CALIBRATION,
                    help="exports (CSV, or .csv.gz) whose rows calibrate the model; none: the model "
                    "uncalibrated")
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    log = os.path.join(a.out, "tune_progress.log")
    for name in ("runs.jsonl", "measurements.csv"):
        if os.path.exists(os.path.join(a.out, name)):
            os.remove(os.path.join(a.out, name))
    dbs = {"calibration": calibration_db(a.out, a.calibration, log) if a.calibration else None,
           "wide": os.path.join(a.out, "wide.db")}
    copy_db(dbs["calibration"], dbs["wide"])
    rows = []
    start = time.monotonic()
    try:
        for op, count in (("gemm", a.gemm), ("attention", a.attention)):
            for label, args in shapes(op, count):
                one_shape(op, label, args, a, dbs, rows)
        wide_rows = exported_rows(dbs["wide"], a.out,
                                  keep={r["wide_run_id"] for r in rows})
        for row in rows:
            row["spearman_wide"] = spearman(wide_rows.get(row.pop("wide_run_id"), []))
    finally:
        for db in dbs.values():
            if db:
                remove_db(db)
    with open(os.path.join(a.out, "tuning_quality.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in row.items()})
    print(f"\n{'op':9} {'shape':44} {'gap %':>6} {'meas d/w':>9} {'rho d/w':>10} {'cold s':>7} "
          f"{'compile':>7} {'measure':>7} {'wait':>5} {'warm s':>6}  default pick")
    for r in rows:
        rho = f"{fmt(r['spearman_default'], 2)}/{fmt(r['spearman_wide'], 2)}"
        print(f"{r['op']:9} {r['shape']:44} {r['gap_pct']:6.2f} "
              f"{r['measured_default']:>4}/{r['measured_wide']:<4} {rho:>10} {r['cold_s']:7.1f} "
              f"{r['cold_compile_s']:7.1f} {r['cold_measure_s']:7.1f} {r['cold_wait_s']:5.1f} "
              f"{r['warm_s']:6.1f}  {r['default_pick']}")
    print()
    for op in ("gemm", "attention"):
        mine = [r for r in rows if r["op"] == op]
        if not mine:
            continue
        within = sum(r["gap_pct"] <= 2.0 for r in mine)
        cold = [r["cold_s"] for r in mine]
        rhos = [r["spearman_wide"] for r in mine if r["spearman_wide"] is not None]
        print(f"{op}: {within}/{len(mine)} default picks within 2% of the wide best "
              f"({100 * within / len(mine):.0f}%; target >= 95%), worst gap "
              f"{max(r['gap_pct'] for r in mine):.2f}%; cold tune median {statistics.median(cold):.1f}s, "
              f"max {max(cold):.1f}s (target <= 5 s); {sum(c <= 5.0 for c in cold)}/{len(mine)} "
              f"within 5 s; measured {statistics.mean(r['measured_default'] for r in mine):.0f} a "
              f"shape; Spearman (wide) median {statistics.median(rhos) if rhos else float('nan'):.2f}")
    print(f"bench wall {time.monotonic() - start:.0f}s")


if __name__ == "__main__":
    main()
