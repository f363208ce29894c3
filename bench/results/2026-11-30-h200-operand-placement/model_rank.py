# How well the model ranks the measured configs of a tuning export (kerntune cache export): per
# shape, Spearman rho between measured medians and `kerntune explain --config` predictions, and the
# measured winner's place in the model's order. Usage: python3 model_rank.py KERNTUNE_BINARY CSV...
import csv, subprocess, sys, re, collections
kt, files = sys.argv[1], sys.argv[2:]
rows = []
for f in files:
    rows += [r for r in csv.DictReader(open(f)) if r['kind'] == 'measurement' and r['status'] == 'ok'
             and 'finalist' not in r['detail']]
by = collections.defaultdict(dict)
for r in rows: by[r['problem_key']][r['config_key']] = float(r['median_us'])
def rankv(v):
    order = sorted(range(len(v)), key=lambda i: v[i]); rk = [0]*len(v)
    for j, i in enumerate(order): rk[i] = j
    return rk
for prob, meas in by.items():
    shape = prob.split(':')[-1]
    keys = list(meas)
    pred = []
    for k in keys:
        out = subprocess.run([kt, 'explain', '--shape', shape, '--config', k, '--db', '/tmp/none.db'], capture_output=True, text=True).stdout
        m = re.search(r'predicted\s+([0-9.]+) us', out)
        pred.append(float(m.group(1)) if m else float('nan'))
    mv = [meas[k] for k in keys]
    rm, rp = rankv(mv), rankv(pred)
    n = len(keys)
    rho = 1 - 6 * sum((a - b) ** 2 for a, b in zip(rm, rp)) / (n * (n * n - 1)) if n > 2 else float('nan')
    best = min(range(n), key=lambda i: mv[i])
    print(f"{shape:>18} n={n:3d} spearman {rho:+.2f}  measured best {keys[best]} is model #{rp[best] + 1}; model's top measures {mv[min(range(n), key=lambda i: pred[i])]:.1f} us vs best {mv[best]:.1f}")
