"""Attention decode steps (a few query rows against a long KV cache) beside PyTorch SDPA's backends
and a copy of the K and V bytes, in one process on the same tensors (bench_timing.median_us:
medians with L2 flushed before every repetition). "of copy" is the bandwidth of reading K and V
once (their bytes over kerntune's time) over the copy's (twice those bytes, read and written, over
its time). Run on the GPU machine after `kerntune tune --op attention` filled the database for
these shapes:
    KERNTUNE_DB=... python3 python/bench_decode_attention.py [--nq 1] [--csv OUT.csv]"""
import argparse
import warnings
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(__file__))
import kerntune  # noqa: E402
from bench_timing import median_us, write_csv  # noqa: E402

B, HQ, HKV, D = 32, 32, 8, 128
SEQLENS_K = (1024, 2048, 4096, 8192, 16384, 32768)
BACKENDS = (("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION), ("math", SDPBackend.MATH))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nq", type=int, default=1, help="query rows per sequence (1: one decode step)")
    ap.add_argument("--csv")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message="For dense input")  # SDPA on GQA shapes
    rt = kerntune.Runtime()
    rows = []
    print(f"{'Nk':>6} | {'kerntune':>9} {'copy':>8} {'best torch':>10} | {'GB/s':>6} {'of copy':>7} {'vs torch':>8}  backend  err")
    for nk in SEQLENS_K:
        gen = torch.Generator(device="cuda").manual_seed(nk)
        q = torch.randn(B, HQ, args.nq, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        k = torch.randn(B, HKV, nk, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        v = torch.randn(B, HKV, nk, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        o = rt.attention(q, k, v)
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=True)
        err = ((o.float() - ref).norm() / ref.norm()).item()
        res = {"B": B, "Hq": HQ, "Hkv": HKV, "Nq": args.nq, "Nk": nk, "d": D, "rel_err": err}
        res["kerntune_us"] = median_us(lambda: rt.attention(q, k, v))
        # The bytes a decode step must read, K and V once, copied in one kernel.
        src = torch.cat([k.view(-1), v.view(-1)])
        dst = torch.empty_like(src)
        res["copy_us"] = median_us(lambda: dst.copy_(src))
        best = ("none", float("inf"))
        for name, be in BACKENDS:
            try:
                with sdpa_kernel([be]):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                    fn()
                    us = median_us(fn)
            except Exception as e:  # a backend that refuses the case
                print(f"  {name} failed: {str(e)[:100]}")
                us = float("nan")
            res[f"{name}_us"] = us
            if us < best[1]:
                best = (name, us)
        res["best_torch"] = best[0]
        kv_bytes = 2 * k.numel() * k.element_size()
        res["kerntune_gbps"] = kv_bytes / res["kerntune_us"] / 1e3
        res["copy_gbps"] = 2 * kv_bytes / res["copy_us"] / 1e3
        res["of_copy"] = res["kerntune_gbps"] / res["copy_gbps"]
        res["vs_torch"] = best[1] / res["kerntune_us"]
        rows.append(res)
        print(f"{nk:>6} | {res['kerntune_us']:9.1f} {res['copy_us']:8.1f} {best[1]:10.1f} | "
              f"{res['kerntune_gbps']:6.0f} {res['of_copy']:7.3f} {res['vs_torch']:8.3f}  {best[0]:<8} {err:.1e}", flush=True)
        del q, k, v, src, dst
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
