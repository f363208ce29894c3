# How well the GEMM model predicts a tuning export's measurements (`kerntune cache export`), in
# rank and in absolute time. Per shape and export: Spearman rho between measured medians and
# `kerntune explain --config` predictions, the measured best's place in the model's order, the
# measured time of the model's favourite over the best, and predicted / measured over the five
# fastest configs (geometric mean); then the mean |log(predicted / measured)| over all of those.
# Usage: python3 model_fit.py KERNTUNE_BINARY EXPORT.csv[.gz]...
import collections, csv, gzip, math, re, statistics, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

kt, files = sys.argv[1], sys.argv[2:]
rows = []
for f in files:
    with (gzip.open if f.endswith('.gz') else open)(f, 'rt') as fh:
        rows += [(f, r['problem_key'].split(':')[-1], r['config_key'], float(r['median_us']))
                 for r in csv.DictReader(fh)
                 if r['kind'] == 'measurement' and r['status'] == 'ok' and 'finalist' not in r['detail']]

def predicted(row):
    _, shape, key, _ = row
    out = subprocess.run([kt, 'explain', '--shape', shape, '--config', key, '--db', '/tmp/none.db'],
                         capture_output=True, text=True).stdout
    m = re.search(r'predicted\s+([0-9.]+) us', out)
    return float(m.group(1)) if m else float('nan')

with ThreadPoolExecutor(4) as pool:
    preds = list(pool.map(predicted, rows))

def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    rk = [0] * len(v)
    for j, i in enumerate(order): rk[i] = j
    return rk

groups = collections.defaultdict(list)
for (f, shape, key, m), p in zip(rows, preds):
    groups[(shape, f)].append((m, p))
by_shape = collections.defaultdict(list)
for (shape, _), g in sorted(groups.items()):
    m, p = [x[0] for x in g], [x[1] for x in g]
    n = len(g)
    rm, rp = ranks(m), ranks(p)
    rho = 1 - 6 * sum((a - b) ** 2 for a, b in zip(rm, rp)) / (n * (n * n - 1)) if n > 2 else float('nan')
    best, top = min(range(n), key=lambda i: m[i]), min(range(n), key=lambda i: p[i])
    five = sorted(g)[:5]
    err = math.exp(statistics.mean(math.log(pp / mm) for mm, pp in five))
    by_shape[shape].append((rho, rp[best] + 1, m[top] / m[best], err))
errs = []
for shape, v in by_shape.items():
    print(f"{shape:>16}  rho {' '.join(f'{x[0]:.2f}' for x in v)}  best# {' '.join(str(x[1]) for x in v)}"
          f"  top/best {' '.join(f'{x[2]:.3f}' for x in v)}  p/m {' '.join(f'{x[3]:.2f}' for x in v)}")
    errs += [x[3] for x in v]
print(f"mean |log(p/m)| over the five fastest configs: {statistics.mean(abs(math.log(e)) for e in errs):.3f}")
