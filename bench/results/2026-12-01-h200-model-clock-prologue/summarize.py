# Geomean over the square and 8k-token shapes, the wave-quantization lines and the decode steps'
# share of the copy, from `kerntune bench --csv` files.
import csv, math, sys
sq8k = {'4096x4096x4096', '8192x8192x8192', '2048x2048x2048', '8192x6144x4096', '8192x28672x4096',
        '8192x4096x14336'}
for f in sys.argv[1:]:
    rows = {r['problem'].split(':')[-1]: r for r in csv.DictReader(open(f))}
    g = [float(rows[s]['ratio']) for s in sq8k if s in rows]
    out = [f"{f}:"]
    if g:
        out.append(f"geomean {math.exp(sum(map(math.log, g)) / len(g)):.3f} (lowest {min(g):.3f})")
    for s in ('8192x8192x8192', '4100x4096x4096', '1536x1536x8192', '512x512x32768'):
        if s in rows: out.append(f"{s} {float(rows[s]['ratio']):.3f}")
    for s in ('1x4096x4096', '16x4096x4096', '64x4096x4096', '64x14336x4096'):
        if s in rows and 'x4096x4096' in s or s == '64x14336x4096':
            if s in rows: out.append(f"{s} {100 * float(rows[s]['of_copy']):.1f}% copy ({float(rows[s]['ratio']):.3f}x)")
    print(' '.join(out))
