"""Renders the JSON document of `kerntune report --json` as one self-contained HTML page: every
plot is made by matplotlib (Agg) and embedded as a base64 PNG, so the page needs no other file and
no network. `kerntune report --out FILE` runs this module; it can also be run on saved data:

    kerntune report --json > report.json
    python3 -m kerntune.report --data report.json --out report.html

The page: the ratio against the baseline library per problem (from a `kerntune bench --csv` file,
or a panel saying there is none), a roofline per device with every winner on it, and per problem
the configs as a heatmap over the tile, the model against the measurements, and the waves of the
winner and the runner-up. Times the model predicted without a GPU are drawn hatched and in orange,
and labelled "predicted"; measured ones are solid blue.
"""
import argparse
import base64
import html
import io
import json
import math
import os
import statistics
import sys

MEASURED_COLOUR = "tab:blue"
PREDICTED_COLOUR = "tab:orange"
PREDICTED_HATCH = "//"
DPI = 80


class ReportError(Exception):
    """Input the renderer cannot use; the message names the problem."""



def counted(n, noun):
    """'1 device', '2 devices'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"

def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ReportError("matplotlib is missing: install it (`apt-get install python3-matplotlib` "
                          "on Debian, or `pip install matplotlib`)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _png(fig):
    """The figure as an <img> holding a base64 PNG, and the figure closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    _pyplot().close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{data}">'


def _message(ax, text):
    """An empty panel that says why it is empty."""
    ax.set_axis_off()
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=10,
            transform=ax.transAxes,
            bbox=dict(boxstyle="round", facecolor="#f4f4f4", edgecolor="#999999"))


def _log_axes(ax):
    """Both axes logarithmic, ticks labelled as plain numbers (minor ones too where a range
    spans few decades)."""
    from matplotlib.ticker import LogFormatter
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1.5, 0.6)))
        axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1.5, 0.6)))


def _plain(text):
    """`text` (read from a database or a CSV) drawn as it is: matplotlib reads $...$ as math."""
    return text.replace("$", r"\$")


def _short(problem):
    """A problem's key without the op prefix and dtypes where they are the default bf16."""
    return _plain(problem["problem"].replace(":bf16:bf16:nt:", " ").replace(":bf16:", " "))


def _label(index, problem):
    return f"{index}. {_short(problem)}"


def _baseline_ratios(problem):
    return [row["ratio"] for row in problem["bench"] if row["ratio"]]


def ratio_figure(plt, problems, bench_file):
    """One horizontal bar per problem: the median ratio of the baseline's time over kerntune's
    (> 1: kerntune faster), the range over the bench file's rows as an error bar."""
    rows = [(i, p, _baseline_ratios(p)) for i, p in enumerate(problems, 1)]
    if not any(ratios for _, _, ratios in rows):
        fig, ax = plt.subplots(figsize=(11, 1.2))
        why = ("the bench file has no baseline timing of these problems" if bench_file else
               "the database records no baseline timings: pass --bench FILE, a CSV that "
               "`kerntune bench --csv FILE` wrote on this device")
        _message(ax, f"No ratio against the baseline library: {why}.")
        ax.set_title("Against the baseline library")
        return _png(fig)
    fig, ax = plt.subplots(figsize=(11, 0.35 * len(rows) + 1.2))
    labels, medians, lows, highs, colours = [], [], [], [], []
    for i, p, ratios in rows:
        labels.append(_label(i, p))
        if ratios:
            median = statistics.median(ratios)
            medians.append(median)
            lows.append(median - min(ratios))
            highs.append(max(ratios) - median)
            colours.append("tab:green" if median >= 1 else "tab:red")
        else:
            medians.append(0)
            lows.append(0)
            highs.append(0)
            colours.append("#cccccc")
    y = list(range(len(rows)))
    ax.barh(y, medians, xerr=[lows, highs], color=colours, capsize=3)
    for yi, (_, p, ratios), median in zip(y, rows, medians):
        if ratios:
            names = sorted({row["baseline"] for row in p["bench"] if row["ratio"]})
            ax.text(median, yi,
                    f"  {median:.3f} vs {_plain(', '.join(names))} ({len(ratios)} runs)",
                    va="center", fontsize=8)
        else:
            ax.text(0, yi, "  no baseline timing", va="center", fontsize=8, color="#666666")
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("baseline time / kerntune time (> 1: kerntune faster)")
    ax.set_title("Against the baseline library (median of the bench runs, range as error bar)")
    ax.set_xlim(0, max(1.2, max(m + h for m, h in zip(medians, highs)) * 1.25))
    return _png(fig)


def roofline_figure(plt, device, numbered):
    """The device's roofline (DRAM bandwidth and tensor-core ceilings) with each winner at its
    arithmetic intensity and achieved TFLOP/s; predicted winners hollow and orange."""
    fig, ax = plt.subplots(figsize=(11, 5))
    points = [(i, p) for i, p in numbered
              if p["device"] == device["fingerprint"] and p["winner"] and p["winner"]["tflops"]]
    if not points:
        _message(ax, "No winner with a time on this device.")
        return _png(fig)
    xs = [p["flop_per_byte"] for _, p in points]
    ys = [p["winner"]["tflops"] for _, p in points]
    model = device["model"]
    # The range holds every winner and the ridge point, where the bandwidth meets the top roof.
    ridge = [model["tensor_tflops"] * 1000 / model["dram_gbps"]] if model else []
    low, high = min(xs + ridge) / 4, max(xs + ridge) * 4
    ax.set_ylim(min(ys) / 4, max(ys + [model["tensor_tflops"] if model else 0]) * 2)
    if model:
        grid = [low * (high / low) ** (k / 200) for k in range(201)]
        for roof, style, name in ((model["tensor_tflops"], "-", "tensor cores"),
                                  (model["mma_sync_tflops"], ":", "mma.sync")):
            if not roof or (style == ":" and roof == model["tensor_tflops"]):
                continue
            ceiling = [min(roof, model["dram_gbps"] * x / 1000) for x in grid]
            ax.plot(grid, ceiling, style, color="black", linewidth=1.2,
                    label=f"roof: {roof:.0f} TFLOP/s ({name}), {model['dram_gbps']:.0f} GB/s")
    for (i, p), x, y in zip(points, xs, ys):
        predicted = p["winner"]["predicted"]
        ax.scatter([x], [y], s=60, marker="^" if predicted else "o",
                   facecolors="none" if predicted else MEASURED_COLOUR,
                   edgecolors=PREDICTED_COLOUR if predicted else MEASURED_COLOUR, linewidths=1.5)
        ax.annotate(str(i), (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.scatter([], [], marker="o", color=MEASURED_COLOUR, label="winner, measured")
    ax.scatter([], [], marker="^", facecolors="none", edgecolors=PREDICTED_COLOUR,
               label="winner, predicted by the model (no GPU)")
    _log_axes(ax)
    ax.set_xlabel("arithmetic intensity (FLOP / minimum byte)")
    ax.set_ylabel("TFLOP/s")
    ceilings = ("ceilings of the built-in profile of its compute capability" if model else
                "no built-in profile of its compute capability: no ceilings")
    ax.set_title(f"Roofline, {_plain(device['fingerprint'])} ({ceilings})", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return _png(fig)


def _heatmap(ax, problem):
    """The best time of each tile among the configs of one kind (measured where any are, else
    predicted), coloured by its slowdown over the best; the winner's tile outlined."""
    axes = problem["tile_axes"]
    measured = [c for c in problem["configs"] if not c["predicted"] and c["tile"]]
    predicted = [c for c in problem["configs"] if c["predicted"] and c["tile"]]
    configs = measured or predicted
    if not axes or not configs:
        _message(ax, "No tile to plot: this op's configs name none." if not axes else
                 "No config with a time.")
        return
    best = {}
    for c in configs:
        tile = tuple(c["tile"])
        if tile not in best or c["us"] < best[tile]["us"]:
            best[tile] = c
    xs = sorted({t[0] for t in best})
    ys = sorted({t[1] for t in best})
    fastest = min(c["us"] for c in best.values())
    grid = [[math.nan] * len(xs) for _ in ys]
    for (x, y), c in best.items():
        grid[ys.index(y)][xs.index(x)] = c["us"] / fastest
    image = ax.imshow(grid, cmap="viridis_r", origin="lower", aspect="auto", vmin=1.0,
                      vmax=max(1.05, max(v for row in grid for v in row if not math.isnan(v))))
    ax.figure.colorbar(image, ax=ax, label="time / best time")
    is_predicted = not measured
    winner = problem["winner"]["config"] if problem["winner"] else None
    from matplotlib.patches import Rectangle
    for (x, y), c in best.items():
        col, row = xs.index(x), ys.index(y)
        ax.text(col, row, f"{c['us']:.3g}", ha="center", va="center", fontsize=8, color="white",
                bbox=dict(boxstyle="square,pad=0.1", facecolor="black", alpha=0.35, linewidth=0))
        if is_predicted:
            ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False,
                                   hatch=PREDICTED_HATCH, edgecolor=PREDICTED_COLOUR,
                                   linewidth=0))
        if winner and any(w["config"] == winner and tuple(w["tile"]) == (x, y)
                          for w in configs if w["tile"]):
            ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, edgecolor="red",
                                   linewidth=2.5))
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(axes[0])
    ax.set_ylabel(axes[1])
    kind = "PREDICTED (model, no GPU)" if is_predicted else "measured"
    ax.set_title(f"{len(configs)} configs, {kind}: best us per tile\n(winner's tile in red)",
                 fontsize=9, color=PREDICTED_COLOUR if is_predicted else "black")


def _model_vs_measured(ax, problem):
    points = [c for c in problem["configs"] if not c["predicted"] and c["predicted_us"]]
    if not points:
        _message(ax, "No measurements to hold the model against:\nthe database has only the "
                 "model's times\nfor this problem (tuned without a GPU).")
        return
    xs = [c["predicted_us"] for c in points]
    ys = [c["us"] for c in points]
    low, high = min(xs + ys) / 1.3, max(xs + ys) * 1.3
    ax.plot([low, high], [low, high], "--", color="black", linewidth=1, label="model = measured")
    ax.scatter(xs, ys, s=18, color=MEASURED_COLOUR, label="measured configs")
    winner = problem["winner"]
    for c in points:
        if winner and c["config"] == winner["config"]:
            ax.scatter([c["predicted_us"]], [c["us"]], s=90, facecolors="none", edgecolors="red",
                       linewidths=2, label="winner")
    _log_axes(ax)
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("model's time (us)")
    ax.set_ylabel("measured time (us)")
    ax.set_title("Model vs measured", fontsize=9)
    ax.legend(fontsize=7)


def _waves(ax, problem):
    """Winner and runner-up: the grid in waves over the SMs' CTA slots; the last wave's fill."""
    picks = [(name, pick) for name, pick in (("winner", problem["winner"]),
                                             ("runner-up", problem["runner_up"]))
             if pick and pick["waves"]]
    if not picks:
        _message(ax, "No waves: the op's model counts none, or the\ndevice has no built-in "
                 "profile.")
        return
    for row, (name, pick) in enumerate(picks):
        waves = pick["waves"]
        filled = waves["num_ctas"] / waves["slots"] if waves["slots"] else 0
        colour = PREDICTED_COLOUR if pick["predicted"] else MEASURED_COLOUR
        ax.barh(row, waves["waves"], color="#e8e8e8", edgecolor="#999999")
        ax.barh(row, filled, color=colour, hatch=PREDICTED_HATCH if pick["predicted"] else None,
                edgecolor="white" if pick["predicted"] else colour)
        for boundary in range(1, waves["waves"]):
            ax.plot([boundary, boundary], [row - 0.4, row + 0.4], color="white", linewidth=1.5)
        ax.text(waves["waves"], row,
                f"  {waves['waves']} waves, last {waves['last_wave_ctas']}/{waves['slots']} "
                f"({100 * waves['last_wave_occupancy']:.0f}%)", va="center", fontsize=8)
    ax.set_yticks(range(len(picks)),
                  [f"{name}\n{'predicted' if p['predicted'] else 'measured'}"
                   for name, p in picks], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(p["waves"]["waves"] for _, p in picks) * 1.9)
    ax.set_xlabel("waves of CTAs over the SMs' slots")
    ax.set_title("Waves and the last wave's occupancy", fontsize=9)


def problem_figure(plt, problem):
    fig, axes = plt.subplots(1, 3, figsize=(16, 3.8), gridspec_kw={"width_ratios": [1.2, 1, 1]})
    _heatmap(axes[0], problem)
    _model_vs_measured(axes[1], problem)
    _waves(axes[2], problem)
    fig.tight_layout()
    return _png(fig)


def _badge(predicted):
    return ('<span class="predicted">predicted</span>' if predicted else
            '<span class="measured">measured</span>')


def _pick_html(name, pick, problem):
    if not pick:
        return f"<tr><th>{name}</th><td colspan=4>none</td></tr>"
    rate = f"{pick['tflops']:.1f} TFLOP/s" if pick["tflops"] else ""
    bandwidth = (f", {problem['min_bytes'] / pick['us'] / 1e3:.0f} GB/s"
                 if pick["us"] and problem["min_bytes"] else "")
    return (f"<tr><th>{name}</th><td><code>{html.escape(pick['config'])}</code></td>"
            f"<td>{pick['us']:.2f} us</td><td>{_badge(pick['predicted'])}</td>"
            f"<td>{rate}{bandwidth}</td></tr>")


def problem_html(plt, index, problem):
    stale = ("" if problem["current_versions"] else
             f'<p class="warn">Tuned with protocol {problem["protocol_version"]} / template '
             f'version {problem["template_version"]}, not this build\'s: today\'s kernels may '
             f"differ.</p>")
    failures = ", ".join(f"{status} {n}" for status, n in sorted(problem["failures"].items()))
    ratios = _baseline_ratios(problem)
    baseline = (f"ratio against the baseline: median {statistics.median(ratios):.3f} over "
                f"{len(ratios)} bench runs" if ratios else "no baseline timing")
    return (
        f'<section><h2 id="p{index}">{index}. <code>{html.escape(problem["problem"])}</code></h2>'
        f'<p class="meta">{html.escape(problem["op"])} on {html.escape(problem["device"])}: '
        f'{problem["flops"] / 1e9:.3g} GFLOP, {problem["min_bytes"] / 1e6:.3g} MB minimum '
        f'traffic; {len(problem["configs"])} configs with a time'
        f'{"; failed or rejected: " + html.escape(failures) if failures else ""}; '
        f"{baseline}</p>{stale}"
        f'<table>{_pick_html("winner", problem["winner"], problem)}'
        f'{_pick_html("runner-up", problem["runner_up"], problem)}</table>'
        f"{problem_figure(plt, problem)}</section>")


STYLE = """
body { font-family: "DejaVu Sans", sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.1em; margin-top: 1.8em; }
.meta { color: #444; } .warn { color: #a04000; }
.banner { background: #fff1dc; border: 2px solid #e07b00; padding: 0.6em 1em; font-weight: bold; }
.predicted { background: #ffe0b3; color: #7a3d00; padding: 0 0.4em; border-radius: 3px; }
.measured { background: #cfe3f7; color: #0b3d6b; padding: 0 0.4em; border-radius: 3px; }
table { border-collapse: collapse; margin: 0.4em 0; }
th, td { text-align: left; padding: 0.15em 0.8em 0.15em 0; font-size: 0.9em; }
img { display: block; max-width: 100%; }
"""


def render(document):
    """The whole page as a string."""
    if not isinstance(document, dict) or not isinstance(document.get("problems"), list):
        raise ReportError("not a `kerntune report --json` document (no problems list)")
    plt = _pyplot()
    problems = document["problems"]
    numbered = list(enumerate(problems, 1))
    bench = document["bench_file"]
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<meta name='generator' content='kerntune.report {html.escape(__file__)}'>",
        f"<title>kerntune report: {html.escape(document['database'])}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>kerntune report: <code>{html.escape(document['database'])}</code></h1>",
        f"<p class='meta'>kerntune {html.escape(document['kerntune_version'])}, schema "
        f"{document['schema_version']}: {counted(len(problems), 'problem')} on "
        f"{counted(len(document['devices']), 'device')}"
        f"{'; bench timings from ' + html.escape(bench) if bench else ''}.</p>",
    ]
    if document["predicted_only"]:
        parts.append("<p class='banner'>PREDICTED: this database holds no measurement. Every time "
                     "below is the model's, picked without a GPU (drawn hatched, in orange), not a "
                     "measured one.</p>")
    if document["notes"]:
        parts.append("<ul class='meta'>" + "".join(f"<li>{html.escape(n)}</li>"
                                                     for n in document["notes"]) + "</ul>")
    parts.append(ratio_figure(plt, problems, bench))
    for device in document["devices"]:
        parts.append(roofline_figure(plt, device, numbered))
    for index, problem in numbered:
        parts.append(problem_html(plt, index, problem))
    parts.append("</body></html>\n")
    return "".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m kerntune.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the JSON of `kerntune report --json`")
    parser.add_argument("--out", required=True, help="the HTML file to write")
    args = parser.parse_args(argv)
    try:
        with open(args.data, encoding="utf-8", errors="replace") as f:
            try:
                document = json.load(f)
            except ValueError as e:
                raise ReportError(f"{args.data} is not JSON: {e}")
        page = render(document)
    except (OSError, ReportError, KeyError, TypeError) as e:
        detail = f"field {e} missing" if isinstance(e, KeyError) else str(e)
        print(f"kerntune.report: {detail}", file=sys.stderr)
        return 1
    temporary = f"{args.out}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(temporary, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
