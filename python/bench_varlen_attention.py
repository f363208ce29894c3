"""Attention over a packed variable-length batch (16 sequences of lengths drawn from 100..8192
with a fixed seed, d 128, GQA 32/8, causal and full) beside what PyTorch offers for the same
batch, in one process on the same tensors (bench_timing.median_us: medians with L2 flushed
before every repetition): SDPA per sequence with each backend (cuDNN, FlashAttention-2,
efficient) and SDPA on a jagged nested tensor; "best torch" is the fastest that ran. kerntune's
output is checked against an FP32 reference per sequence. Run on the GPU machine after tuning the
batch's bucket (`kerntune tune --op attention --shape <printed by --print-shape>`):
    KERNTUNE_DB=... python3 python/bench_varlen_attention.py [--seed 36] [--csv OUT.csv]"""
import argparse
import itertools
import math
import os
import random
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(__file__))
import kerntune  # noqa: E402
from bench_timing import median_us, write_csv  # noqa: E402

SEQUENCES, HQ, HKV, D = 16, 32, 8, 128
BACKENDS = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION))


def lengths(seed):
    rng = random.Random(seed)
    return [rng.randint(100, 8192) for _ in range(SEQUENCES)]


def bucket_shape(lens):
    """The --shape that tunes this batch's bucket (the runtime rounds the same way)."""
    longest = max(64, 1 << (max(lens) - 1).bit_length())
    total = min(max(1 << (sum(lens) - 1).bit_length(), longest + len(lens) - 1), len(lens) * longest)
    return f"b={len(lens)},hq={HQ},hkv={HKV},sq={longest},tq={total},d={D}"


def visible_pairs(lens, causal):
    return sum(n * (n + 1) // 2 if causal else n * n for n in lens)


def per_sequence(q, k, v, cu, causal):
    """SDPA on each sequence in turn, (1, H, n, d) views of the packed tensors."""
    for i in range(len(cu) - 1):
        s = slice(cu[i], cu[i + 1])
        F.scaled_dot_product_attention(q[s].transpose(0, 1)[None], k[s].transpose(0, 1)[None],
                                       v[s].transpose(0, 1)[None], is_causal=causal,
                                       enable_gqa=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--csv")
    ap.add_argument("--print-shape", action="store_true", help="print the bucket's --shape and exit")
    args = ap.parse_args()
    lens = lengths(args.seed)
    if args.print_shape:
        print(bucket_shape(lens))
        return
    warnings.filterwarnings("ignore")
    print(f"lengths (seed {args.seed}): {lens}; bucket {bucket_shape(lens)}")
    cu = [0] + list(itertools.accumulate(lens))
    total = cu[-1]
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    q = torch.randn(total, HQ, D, device="cuda", dtype=torch.bfloat16, generator=gen)
    k = torch.randn(total, HKV, D, device="cuda", dtype=torch.bfloat16, generator=gen)
    v = torch.randn(total, HKV, D, device="cuda", dtype=torch.bfloat16, generator=gen)
    cu_t = torch.tensor(cu, dtype=torch.int32, device="cuda")
    rt = kerntune.Runtime()
    rows = []
    print(f"{'mask':>6} | {'kerntune':>9} {'best torch':>10} | {'TFLOP/s':>7} {'vs torch':>8}  backend   err")
    for causal in (False, True):
        o = rt.attention_varlen(q, k, v, cu_t, cu_t, max(lens), max(lens), causal=causal)
        err = 0.0
        for i in range(SEQUENCES):
            s = slice(cu[i], cu[i + 1])
            want = F.scaled_dot_product_attention(
                q[s].transpose(0, 1)[None].float(), k[s].transpose(0, 1)[None].float(),
                v[s].transpose(0, 1)[None].float(), is_causal=causal, enable_gqa=True)
            got = o[s].transpose(0, 1)[None].float()
            err = max(err, ((got - want).norm() / want.norm()).item())
        flops = 4 * visible_pairs(lens, causal) * HQ * D
        res = {"sequences": SEQUENCES, "Hq": HQ, "Hkv": HKV, "d": D, "total": total,
               "longest": max(lens), "causal": causal, "rel_err": err}
        res["kerntune_us"] = median_us(
            lambda: rt.attention_varlen(q, k, v, cu_t, cu_t, max(lens), max(lens), causal=causal))
        best = ("none", float("inf"))
        for name, be in BACKENDS:
            try:
                with sdpa_kernel([be]):
                    per_sequence(q, k, v, cu, causal)
                    us = median_us(lambda: per_sequence(q, k, v, cu, causal))
            except Exception as e:  # a backend that refuses the case
                print(f"  per-sequence {name} failed: {str(e)[:100]}")
                us = float("nan")
            res[f"{name}_loop_us"] = us
            if us < best[1]:
                best = (f"{name}-loop", us)
        try:
            nq = torch.nested.nested_tensor_from_jagged(q, cu_t.long()).transpose(1, 2)
            kk = k.repeat_interleave(HQ // HKV, dim=1)  # jagged SDPA takes no GQA
            vv = v.repeat_interleave(HQ // HKV, dim=1)
            nk = torch.nested.nested_tensor_from_jagged(kk, cu_t.long()).transpose(1, 2)
            nv = torch.nested.nested_tensor_from_jagged(vv, cu_t.long()).transpose(1, 2)
            fn = lambda: F.scaled_dot_product_attention(nq, nk, nv, is_causal=causal)
            fn()
            us = median_us(fn)
        except Exception as e:
            print(f"  jagged SDPA failed: {str(e)[:100]}")
            us = float("nan")
        res["jagged_us"] = us
        if us < best[1]:
            best = ("jagged", us)
        res["best_torch"] = best[0]
        res["kerntune_tflops"] = flops / res["kerntune_us"] / 1e6
        res["vs_torch"] = best[1] / res["kerntune_us"]
        rows.append(res)
        print(f"{'causal' if causal else 'full':>6} | {res['kerntune_us']:9.1f} {best[1]:10.1f} | "
              f"{res['kerntune_tflops']:7.0f} {res['vs_torch']:8.3f}  {best[0]:<9} {err:.1e}",
              flush=True)
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
