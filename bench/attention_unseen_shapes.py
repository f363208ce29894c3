"""Seeded attention shapes that no suite holds, and the suites' own cases they avoid. Prints one
kerntune shape per line, `b=B,hq=HQ,hkv=HKV,sq=N,sk=N,d=D` with ` causal` after a causal one
(python3 bench/attention_unseen_shapes.py [--count 8] [--seed 36]); python/bench_attention.py
times the same shapes (--heldout) beside SDPA.

The distribution: d 64 or 128 (the backward's bench adds 256); 300-12000 tokens a sequence (any
integer), as many sequences as make 4k-32k tokens; K/V heads 4, 8 or 16 at d >= 128 (8, 16, 32 at
d = 64) with MHA twice as likely as GQA 4:1; causal half of the time."""
import argparse
import random

# The cases of the FlashAttention benchmark (the attention-d64 and attention-d128 suites, both
# masks) and the GQA and d = 256 cases bench/attention_vs_sdpa.sh tunes: (B, Hq, Hkv, N, d, causal).
CASES = [(16384 // n, 2048 // d, 2048 // d, n, d, c) for d in (64, 128)
         for n in (512, 1024, 2048, 4096, 8192, 16384) for c in (False, True)]
CASES += [(1, 32, 8, 8192, 128, True), (2, 8, 8, 4096, 256, False)]


def heldout_cases(count, seed, head_dims=(64, 128)):
    """Seeded shapes off the suites' grid: 4k-32k tokens, ragged lengths, GQA or not, d one of
    head_dims."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        d = rng.choice(head_dims)
        n = rng.randrange(300, 12000)
        b = max(1, rng.randrange(4096, 32768) // n)
        hkv = rng.choice((4, 8, 16)) if d >= 128 else rng.choice((8, 16, 32))
        hq = hkv * rng.choice((1, 1, 4))
        case = (b, hq, hkv, n, d, rng.random() < 0.5)
        if case not in CASES:
            cases.append(case)
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--head-dims", default="64,128", help="comma-separated head dims to draw from")
    args = ap.parse_args()
    head_dims = tuple(int(d) for d in args.head_dims.split(","))
    for b, hq, hkv, n, d, causal in heldout_cases(args.count, args.seed, head_dims):
        print(f"b={b},hq={hq},hkv={hkv},sq={n},sk={n},d={d}" + (" causal" if causal else ""))


if __name__ == "__main__":
    main()
