"""Seeded GEMM shapes that no suite holds, as LLM inference and training produce them. Prints one
MxNxK per line (python3 bench/gemm_unseen_shapes.py [--count 40] [--seed 38]).

The distribution: M (tokens in a batch) is a decode step (1-64) a quarter of the time, a ragged
mid-size batch (65-2047, any integer) half of the time, and a large batch (2048-16384, multiples
of 16 or any integer in equal parts) the rest. (N, K) is a projection of a 1B-70B model
(hidden 2048, 3072, 4096, 5120, 8192; FFN 5632, 8192, 11008, 13824, 14336, 28672; fused QKV of
GQA heads; each as up or down projection, so N and K swap) four times in six, an MoE expert
(narrow N 128-1408 against hidden K) one in six, and a deep-K reduction (M, N 64-512, K 16k-64k;
a weight gradient's shape) one in six. Shapes of the foundation suite are skipped."""
import argparse
import random

HIDDEN = (2048, 3072, 4096, 5120, 8192)
FFN = {2048: 5632, 3072: 8192, 4096: 11008, 5120: 13824, 8192: 28672}
FFN_ALT = {4096: 14336}
HEAD_DIM = 128


def projection(rng):
    h = rng.choice(HIDDEN)
    kind = rng.choice(("qkv", "o", "up", "down"))
    if kind == "qkv":
        heads = h // HEAD_DIM
        kv = max(1, heads // rng.choice((1, 4, 8)))
        return (heads + 2 * kv) * HEAD_DIM, h
    if kind == "o":
        return h, h
    ffn = FFN_ALT.get(h, FFN[h]) if rng.random() < 0.3 else FFN[h]
    return (2 * ffn, h) if kind == "up" else (h, ffn)


def rows(rng):
    r = rng.random()
    if r < 0.25:
        return rng.randint(1, 64)
    if r < 0.75:
        return rng.randint(65, 2047)
    m = rng.randint(2048, 16384)
    return m - m % 16 if rng.random() < 0.5 else m


def shape(rng):
    r = rng.random()
    if r < 4 / 6:
        n, k = projection(rng)
        return rows(rng), n, k
    if r < 5 / 6:
        return rows(rng), rng.choice((128, 256, 384, 512, 768, 1024, 1408)), rng.choice(HIDDEN)
    return rng.randint(64, 512), rng.randint(64, 512), rng.choice((16384, 32768, 65536))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=38)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    foundation = {(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (8192, 6144, 4096),
                  (8192, 28672, 4096), (8192, 4096, 14336), (4100, 4096, 4096),
                  (1536, 1536, 8192), (512, 512, 32768), (64, 14336, 4096), (16, 4096, 4096)}
    seen = set()
    while len(seen) < args.count:
        s = shape(rng)
        if s in seen or s in foundation:
            continue
        seen.add(s)
        print("x".join(map(str, s)))


if __name__ == "__main__":
    main()
