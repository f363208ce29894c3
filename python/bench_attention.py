"""kerntune attention forward beside PyTorch SDPA's FlashAttention-2 and cuDNN backends, in one
process on the same tensors, timed the same way (bench_timing.median_us: medians with L2 flushed
before every repetition). Run on the GPU machine after `kerntune tune --op attention ...` filled the database:
    KERNTUNE_DB=... python3 python/bench_attention.py [--dtypes bf16,fp16] [--csv OUT.csv]
With --heldout N it times N seeded shapes that no suite holds instead (dispatched from the tuned
neighbours or the model, as a user's untuned shape would be)."""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import kerntune  # noqa: E402
from attention_unseen_shapes import CASES, heldout_cases  # noqa: E402
from bench_timing import median_us, ratio_summary, write_csv  # noqa: E402


def flops(b, h, n, d, causal):
    pairs = n * (n + 1) / 2 if causal else n * n
    return 4 * b * h * pairs * d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    ap.add_argument("--dtypes", default="bf16,fp16", help="comma-separated: bf16, fp16")
    ap.add_argument("--heldout", type=int, default=0, help="time N seeded untuned shapes instead")
    ap.add_argument("--seed", type=int, default=36, help="seed of the --heldout shapes")
    args = ap.parse_args()
    cases = heldout_cases(args.heldout, args.seed) if args.heldout else CASES
    torch_dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16}
    dtypes = args.dtypes.split(",")
    for name in dtypes:
        if name not in torch_dtypes:
            ap.error(f"--dtypes: '{name}' is not bf16 or fp16")
    rt = kerntune.Runtime()
    rows = []
    print(f"{'dtype':>5} {'B':>3} {'Hq':>3} {'Hkv':>3} {'N':>6} {'d':>4} {'causal':>6} | {'kerntune':>8} {'FA2':>8} {'cuDNN':>8} | {'vs FA2':>6} {'vs cuDNN':>8}  err")
    for dtype, (b, hq, hkv, n, d, causal) in ((t, c) for t in dtypes for c in cases):
        q = torch.randn(b, hq, n, d, device="cuda", dtype=torch_dtypes[dtype])
        k = torch.randn(b, hkv, n, d, device="cuda", dtype=torch_dtypes[dtype])
        v = torch.randn(b, hkv, n, d, device="cuda", dtype=torch_dtypes[dtype])
        fl = flops(b, hq, n, d, causal)
        o = rt.attention(q, k, v, causal=causal)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hkv)
        err = ((o.float() - ref.float()).norm() / ref.float().norm()).item()
        res = {"dtype": dtype, "B": b, "Hq": hq, "Hkv": hkv, "N": n, "d": d, "causal": causal, "rel_err": err}
        res["kerntune"] = fl / median_us(lambda: rt.attention(q, k, v, causal=causal)) / 1e6
        for name, be in (("fa2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel([be]):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hkv)
                    fn()
                    res[name] = fl / median_us(fn) / 1e6
            except Exception as e:  # a backend that refuses the case
                res[name] = float("nan")
                print(f"  {name} failed: {str(e)[:100]}")
        rows.append(res)
        print(f"{dtype:>5} {b:>3} {hq:>3} {hkv:>3} {n:>6} {d:>4} {str(causal):>6} | {res['kerntune']:8.1f} {res['fa2']:8.1f} {res['cudnn']:8.1f} | "
              f"{res['kerntune'] / res['fa2']:6.3f} {res['kerntune'] / res['cudnn']:8.3f}  {err:.1e}", flush=True)
        del q, k, v
    if args.csv:
        write_csv(args.csv, rows)
    for backend in ("fa2", "cudnn"):
        summary = ratio_summary(backend, [r["kerntune"] / r[backend] for r in rows])
        if summary:
            print(summary)


if __name__ == "__main__":
    main()
