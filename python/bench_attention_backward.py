"""kerntune's attention backward (dQ, dK, dV from dO, given the forward's O and logsumexp) beside
PyTorch SDPA's cuDNN and FlashAttention-2 backward, in one process on the same tensors: the cases
of bench_attention.py (the FlashAttention benchmark: 16k tokens, hidden 2048, d 64 and 128,
seqlen 512..16k, full and causal; GQA 32/8 causal at 8k; d 256). Only the backward is timed:
kerntune's Runtime.attention_backward call (its three kernels), and SDPA's autograd backward of
one forward of each backend (retain_graph), medians with L2 flushed before every repetition
(bench_timing.median_us). TFLOP/s count 2.5 times the forward's FLOPs (the visible pairs, so
about half for causal). Each backend's gradients are checked once against an FP32 reference:
SDPA's math backend in float32 on the last batch entry's last KV head and its query heads (heads
and batch entries are independent, so those slices of the gradients are exact). A case whose
head_dim the backward does not take is reported as unsupported, with the library's reason. Run
on the GPU machine after tuning these shapes (bench/attention_backward_vs_sdpa.sh does both):
    KERNTUNE_DB=... python3 python/bench_attention_backward.py [--dtypes bf16] [--csv OUT.csv]
        [--head-dims 64,128,256]
With --heldout N it times N seeded shapes that no suite holds instead (head_dim 64, 128 or 256;
bench/attention_unseen_shapes.py), served from the tuned neighbours or the model as a user's
untuned shape would be.
Exits 1 when a kerntune call fails other than as unsupported or its gradients miss the
tolerance; the table and CSV are written first."""
import argparse
import os
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import kerntune  # noqa: E402
from attention_unseen_shapes import CASES, heldout_cases  # noqa: E402
from bench_attention import flops  # noqa: E402
from bench_timing import geomean, median_us, ratio_summary, write_csv  # noqa: E402

BACKENDS = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION))
TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
# ‖g − ref‖ / ‖ref‖ of each gradient: the op's own tolerance (attention_backward_tolerance, which
# an FP32 emulation of the kernel's roundings meets with 4x and 10x to spare).
TOLERANCE = {"bf16": 1e-2, "fp16": 3e-3}
NAN = float("nan")


def reference_gradients(q, k, v, dout, causal):
    """The FP32 gradients (dq, dk, dv) of the last batch entry's last KV head and its query heads,
    by SDPA's math backend on float32 copies, and a function taking a full (dq, dk, dv) to the
    same slices."""
    hq, hkv = q.shape[1], k.shape[1]
    group = hq // hkv
    q_heads, kv_heads = slice(hq - group, hq), slice(hkv - 1, hkv)

    def part(grads):
        dq, dk, dv = grads
        return dq[-1:, q_heads], dk[-1:, kv_heads], dv[-1:, kv_heads]

    qf, kf, vf = (t.detach().float().requires_grad_() for t in part((q, k, v)))
    with sdpa_kernel([SDPBackend.MATH]):
        o = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, enable_gqa=group > 1)
    want = torch.autograd.grad(o, (qf, kf, vf), dout[-1:, q_heads].float())
    return want, part


def gradient_error(grads, want, part):
    """The largest ‖g − ref‖ / ‖ref‖ of dq, dk, dv on the reference's slices; inf when any
    gradient holds a non-finite value anywhere."""
    if not all(torch.isfinite(g).all().item() for g in grads):
        return float("inf")
    return max(((g.float() - w).norm() / w.norm()).item() for g, w in zip(part(grads), want))


def time_kerntune(rt, q, k, v, o, lse, dout, causal, want, part):
    """(µs, gradient error, note); a head_dim the backward does not take is (NaN, NaN,
    'unsupported: <the library's reason>')."""
    def backward():
        return rt.attention_backward(q, k, v, o, dout, lse, causal=causal)

    try:
        grads = backward()
    except kerntune.KerntuneError as e:
        if "head_dim" in str(e):
            return NAN, NAN, f"unsupported: {e}"
        raise
    return median_us(backward), gradient_error(grads, want, part), ""


def time_sdpa(backend, q, k, v, dout, causal, want, part):
    """(µs, gradient error, note) of SDPA's backward with `backend` on the same tensors; NaNs and
    the reason when the backend refuses the case."""
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))  # the same storage
    try:
        with sdpa_kernel([backend]):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                 enable_gqa=q.shape[1] != k.shape[1])
        # dO in the memory layout the backend gave O, so no backend copies it in the timed call.
        grad_out = torch.empty_like(out).copy_(dout)

        def backward():
            return torch.autograd.grad(out, (q, k, v), grad_out, retain_graph=True)

        grads = backward()
        return median_us(backward), gradient_error(grads, want, part), ""
    except RuntimeError as e:  # a backend that refuses the case
        return NAN, NAN, f"refused: {(str(e).splitlines() or [''])[0][:120]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    ap.add_argument("--dtypes", default="bf16", help="comma-separated: bf16, fp16")
    ap.add_argument("--seed", type=int, default=37, help="seed of the random tensors")
    ap.add_argument("--heldout", type=int, default=0, help="time N seeded untuned shapes instead")
    ap.add_argument("--shape-seed", type=int, default=37, help="seed of the --heldout shapes")
    ap.add_argument("--head-dims", default="64,128,256",
                    help="comma-separated: time only the cases of these head_dims")
    args = ap.parse_args()
    try:
        head_dims = {int(d) for d in args.head_dims.split(",")}
    except ValueError:
        ap.error(f"--head-dims: '{args.head_dims}' is not a comma-separated list of integers")
    cases = (heldout_cases(args.heldout, args.shape_seed, head_dims=(64, 128, 256))
             if args.heldout else CASES)
    cases = [c for c in cases if c[4] in head_dims]
    if not cases:
        ap.error(f"--head-dims {args.head_dims}: no case has those head_dims")
    dtypes = args.dtypes.split(",")
    for name in dtypes:
        if name not in TORCH_DTYPES:
            ap.error(f"--dtypes: '{name}' is not bf16 or fp16")
    warnings.filterwarnings("ignore")  # SDPA's notes on backends it skips
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference in true FP32
    torch.manual_seed(args.seed)
    rt = kerntune.Runtime()
    rows, failures = [], []
    print(f"{'dtype':>5} {'B':>3} {'Hq':>3} {'Hkv':>3} {'N':>6} {'d':>4} {'causal':>6} | "
          f"{'kerntune':>8} {'cuDNN':>8} {'FA2':>8} us | {'vs cuDNN':>8} {'vs FA2':>6} | "
          f"{'TFLOP/s':>7} | err kerntune / cuDNN / FA2")
    for dtype, (b, hq, hkv, n, d, causal) in ((t, c) for t in dtypes for c in cases):
        q, dout = (torch.randn(b, hq, n, d, device="cuda", dtype=TORCH_DTYPES[dtype])
                   for _ in range(2))
        k, v = (torch.randn(b, hkv, n, d, device="cuda", dtype=TORCH_DTYPES[dtype])
                for _ in range(2))
        o, lse = rt.attention(q, k, v, causal=causal, return_lse=True)
        want, part = reference_gradients(q, k, v, dout, causal)
        backward_flops = 2.5 * flops(b, hq, n, d, causal)
        res = {"dtype": dtype, "B": b, "Hq": hq, "Hkv": hkv, "N": n, "d": d, "causal": causal}
        case = f"{dtype} b={b},hq={hq},hkv={hkv},s={n},d={d}{' causal' if causal else ''}"
        notes = []
        try:
            res["kerntune_us"], res["kerntune_err"], note = time_kerntune(
                rt, q, k, v, o, lse, dout, causal, want, part)
        except kerntune.KerntuneError as e:
            res["kerntune_us"], res["kerntune_err"], note = NAN, NAN, f"failed: {e}"
            failures.append(f"{case}: {e}")
        notes += [f"kerntune {note}"] if note else []
        if res["kerntune_err"] > TOLERANCE[dtype]:
            failures.append(f"{case}: gradient error {res['kerntune_err']:.2e} > "
                            f"{TOLERANCE[dtype]:.0e}")
        for name, backend in BACKENDS:
            res[f"{name}_us"], res[f"{name}_err"], note = time_sdpa(backend, q, k, v, dout,
                                                                    causal, want, part)
            notes += [f"{name} {note}"] if note else []
        for name, _ in BACKENDS:
            res[f"vs_{name}"] = res[f"{name}_us"] / res["kerntune_us"]
        res["kerntune_tflops"] = backward_flops / res["kerntune_us"] / 1e6
        for name, _ in BACKENDS:
            res[f"{name}_tflops"] = backward_flops / res[f"{name}_us"] / 1e6
        res["note"] = "; ".join(notes)
        rows.append(res)
        print(f"{dtype:>5} {b:>3} {hq:>3} {hkv:>3} {n:>6} {d:>4} {str(causal):>6} | "
              f"{res['kerntune_us']:8.0f} {res['cudnn_us']:8.0f} {res['fa2_us']:8.0f}    | "
              f"{res['vs_cudnn']:8.3f} {res['vs_fa2']:6.3f} | {res['kerntune_tflops']:7.0f} | "
              f"{res['kerntune_err']:.1e} / {res['cudnn_err']:.1e} / {res['fa2_err']:.1e}"
              f"{'  ' + res['note'] if res['note'] else ''}", flush=True)
        del q, k, v, o, lse, dout, want
    if args.csv:
        write_csv(args.csv, rows)
    for dtype in dtypes:
        of_dtype = [r for r in rows if r["dtype"] == dtype]
        for name, _ in BACKENDS:
            summary = ratio_summary(name, [r[f"vs_{name}"] for r in of_dtype])
            print(f"{dtype} {summary or f'vs {name}: no case timed'}")
        unsupported = [f"d={r['d']}" for r in of_dtype if r["note"].startswith("kerntune unsup")]
        if unsupported:
            print(f"{dtype}: kerntune's backward does not take {len(unsupported)} case(s) "
                  f"({', '.join(unsupported)}): see the note column")
        ratios = [r["vs_cudnn"] for r in of_dtype]
        met = all(x == x for x in ratios) and min(ratios) >= 1.0 and geomean(ratios) >= 1.05
        print(f"{dtype}{' held-out shapes' if args.heldout else ''}: issue 37's bar (every case "
              f">= 1.0x cuDNN, geomean >= 1.05x): {'met' if met else 'not met'}")
    for failure in failures:
        print(f"FAILED {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
