"""Attention's gradients through kerntune.ops (the custom op's autograd: the forward's O and
logsumexp feed kerntune::attention_backward) on a GPU, on fresh random data (the seed is
printed), against a float64 reference of the same rounded inputs:

- the float64 reference passes torch.autograd.gradcheck and equals torch SDPA's own float64
  gradients; kerntune's gradients match SDPA's float64 gradients too;
- ragged lengths 1, 127, 1000, 4097 with Nq = Nk and Nq != Nk both ways, both masks (causal rows
  that see no key get zero dQ), MHA, GQA and MQA, head_dim 64, 96, 128 and 256, layouts bhnd
  and bnhd, bfloat16 and float16; (B, N, H, d) views of one fused QKV projection;
- use_deterministic_backward(): 10 runs bitwise identical, and matching the reference.

Each gradient's ||g - ref|| / ||ref|| must stay within the op's tolerance (1e-2 bfloat16, 3e-3
float16: attention_backward_tolerance, met by an FP32 emulation of the kernel's roundings with 4x
and 10x to spare). Run on the GPU machine (CTest python.attention_backward_gpu, label gpu):
    PYTHONPATH=python python3 python/tests/test_attention_backward_gpu.py   # KERNTUNE_LIB, or dist/
A plain script: it prints every check, exits 1 when any failed, 77 when it cannot run here (no
CUDA, PyTorch < 2.4)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gpu_checks import (attention_reference, check, finish, gradient_error,  # noqa: E402
                        require_gpu_and_custom_ops, start)

torch, kt = require_gpu_and_custom_ops("test_attention_backward_gpu")
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

TOLERANCE = {torch.bfloat16: 1e-2, torch.float16: 3e-3}
LENGTHS = (1, 127, 1000, 4097)
# (Nq, Nk): the ragged lengths alone, then Nq != Nk both ways (causal Nq > Nk: rows with no key).
SEQLENS = [(n, n) for n in LENGTHS] + [(1, 4097), (127, 1000), (1000, 127), (4097, 1)]
HEADS = ((4, 4), (8, 2), (8, 1))  # MHA, GQA, MQA
LAYOUTS = ("bhnd", "bnhd")
DTYPES = (torch.bfloat16, torch.float16)


def inputs(b, hq, hkv, sq, sk, d, layout, dtype):
    """Random q, k, v, dO (unit variance) in `layout`, q, k and v requiring gradients."""
    def shape(h, n):
        return (b, h, n, d) if layout == "bhnd" else (b, n, h, d)

    q, k, v = (torch.randn(*shape(h, n), device="cuda", dtype=dtype).requires_grad_()
               for h, n in ((hq, sq), (hkv, sk), (hkv, sk)))
    return q, k, v, torch.randn(*shape(hq, sq), device="cuda", dtype=dtype)


def kerntune_gradients(q, k, v, dout, causal, layout):
    o = kt.attention(q, k, v, causal=causal, layout=layout)
    return torch.autograd.grad(o, (q, k, v), dout)


def reference_gradients(q, k, v, dout, causal, layout):
    """The float64 reference's gradients of the same (rounded) inputs."""
    q, k, v = (t.detach().double().requires_grad_() for t in (q, k, v))
    o, _ = attention_reference(q, k, v, causal, layout)
    return torch.autograd.grad(o, (q, k, v), dout.double())


def sdpa_gradients(q, k, v, dout, causal, layout):
    """torch SDPA's own float64 gradients (math backend; K and V repeated for GQA, their gradients
    summed back by autograd). SDPA's causal mask is top-left aligned: callers keep Nq = Nk."""
    q, k, v = (t.detach().double().requires_grad_() for t in (q, k, v))
    heads = (lambda t: t) if layout == "bhnd" else (lambda t: t.transpose(1, 2))
    groups = heads(q).shape[1] // heads(k).shape[1]
    with sdpa_kernel([SDPBackend.MATH]):
        o = F.scaled_dot_product_attention(heads(q), heads(k).repeat_interleave(groups, 1),
                                           heads(v).repeat_interleave(groups, 1),
                                           is_causal=causal)
    return torch.autograd.grad(heads(o), (q, k, v), dout.double())


def compare(got, want, dtype, what):
    """The three gradients' errors; an AssertionError naming the case past the tolerance."""
    errors = [gradient_error(g, w) for g, w in zip(got, want)]
    for name, g, w, error in zip(("dq", "dk", "dv"), got, want, errors):
        assert g.shape == w.shape and g.dtype == dtype, \
            f"{what}: {name} is {g.dtype} {tuple(g.shape)}, expected {dtype} {tuple(w.shape)}"
        assert error <= TOLERANCE[dtype], \
            f"{what}: {name} error {error:.3g} > {TOLERANCE[dtype]:g}"
    return errors


def describe(b, hq, hkv, sq, sk, d, causal, layout, dtype):
    return (f"b={b},hq={hq},hkv={hkv},sq={sq},sk={sk},d={d} {'causal' if causal else 'full'} "
            f"{layout} {str(dtype).replace('torch.', '')}")


def main():
    start("test_attention_backward_gpu")

    @check("the float64 reference passes torch.autograd.gradcheck (GQA; causal with rows that "
           "see no key; both layouts)")
    def _():
        for causal, layout, sq, sk in ((True, "bhnd", 6, 4), (False, "bnhd", 5, 7),
                                       (True, "bnhd", 5, 5)):
            q, k, v, _ = inputs(1, 4, 2, sq, sk, 8, layout, torch.float64)

            def output(q, k, v):
                return attention_reference(q, k, v, causal, layout)[0]

            assert torch.autograd.gradcheck(output, (q, k, v)), (causal, layout)
        return "3 shapes"

    @check("the float64 reference's gradients equal torch SDPA's own float64 gradients")
    def _():
        worst = 0.0
        for causal, layout, (sq, sk) in ((True, "bhnd", (300, 300)), (False, "bnhd", (77, 500)),
                                         (False, "bhnd", (513, 129))):
            q, k, v, dout = inputs(2, 8, 2, sq, sk, 64, layout, torch.float64)
            for name, g, w in zip(("dq", "dk", "dv"),
                                  reference_gradients(q, k, v, dout, causal, layout),
                                  sdpa_gradients(q, k, v, dout, causal, layout)):
                error = gradient_error(g, w)
                assert error < 1e-10, f"{name} {layout} causal={causal}: {error:.3g}"
                worst = max(worst, error)
        return f"worst {worst:.1e}"

    @check("kerntune's gradients match torch SDPA's float64 gradients")
    def _():
        details = []
        for b, hq, hkv, sq, sk, d, causal, layout, dtype in (
                (2, 8, 2, 1000, 1000, 128, True, "bhnd", torch.bfloat16),
                (1, 4, 1, 300, 2000, 64, False, "bnhd", torch.float16),
                (3, 4, 4, 127, 127, 64, True, "bnhd", torch.bfloat16)):
            q, k, v, dout = inputs(b, hq, hkv, sq, sk, d, layout, dtype)
            what = describe(b, hq, hkv, sq, sk, d, causal, layout, dtype)
            errors = compare(kerntune_gradients(q, k, v, dout, causal, layout),
                             sdpa_gradients(q, k, v, dout, causal, layout), dtype, what)
            details.append(f"{what}: {max(errors):.1e}")
        return "; ".join(details)

    @check("ragged lengths 1/127/1000/4097, Nq != Nk, both masks, MHA/GQA/MQA, d 64/96/128/256, "
           "bhnd and bnhd, bf16 and fp16 vs the float64 reference; causal rows with no key get 0")
    def _():
        failures, worst, count = [], {}, 0
        for i, ((sq, sk), causal, d) in enumerate(
                (s, c, d) for s in SEQLENS for c in (False, True) for d in (64, 96, 128, 256)):
            # Every heads x layout x dtype combination comes round several times over the cases.
            (hq, hkv), layout, dtype = HEADS[i % 3], LAYOUTS[i // 3 % 2], DTYPES[i // 6 % 2]
            b = 2 if max(sq, sk) <= 1000 else 1
            what = describe(b, hq, hkv, sq, sk, d, causal, layout, dtype)
            q, k, v, dout = inputs(b, hq, hkv, sq, sk, d, layout, dtype)
            try:
                got = kerntune_gradients(q, k, v, dout, causal, layout)
                errors = compare(got, reference_gradients(q, k, v, dout, causal, layout), dtype,
                                 what)
                if causal and sq > sk:
                    dq = got[0] if layout == "bhnd" else got[0].transpose(1, 2)
                    unseen = dq[:, :, :sq - sk]
                    assert torch.count_nonzero(unseen).item() == 0, \
                        f"{what}: dq of rows that see no key is not zero"
                key = str(dtype).replace("torch.", "")
                worst[key] = max(worst.get(key, (0.0, "")), (max(errors), what))
            except AssertionError as e:  # every case is reported, then the check fails
                failures.append(str(e))
            except Exception as e:
                failures.append(f"{what}: {type(e).__name__}: {e}")
            count += 1
        assert not failures, f"{len(failures)} of {count} cases: " + " | ".join(failures)
        return f"{count} cases; worst " + "; ".join(
            f"{key} {error:.1e} ({what})" for key, (error, what) in sorted(worst.items()))

    @check("(B, N, H, d) views of one fused QKV projection, a transposed dO: the fused tensor's "
           "gradient vs the float64 reference")
    def _():
        b, n, h, d = 2, 1000, 8, 128
        x = torch.randn(b, n, 3 * h * d, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        weights = torch.randn(b, h, n, d, device="cuda", dtype=torch.float64)

        def loss(x, attention):
            q, k, v = x.view(b, n, 3, h, d).unbind(2)  # row stride 3 * h * d, no copies
            # dO arrives as a transposed (B, N, H, d) view of the weights' gradient.
            return (attention(q, k, v).double().transpose(1, 2) * weights).sum()

        (got,) = torch.autograd.grad(
            loss(x, lambda q, k, v: kt.attention(q, k, v, causal=True, layout="bnhd")), x)
        x64 = x.detach().double().requires_grad_()
        (want,) = torch.autograd.grad(
            loss(x64, lambda q, k, v: attention_reference(q, k, v, True, "bnhd")[0]), x64)
        error = gradient_error(got, want)
        assert error <= TOLERANCE[torch.bfloat16], f"error {error:.3g}"
        return f"error {error:.1e}"

    @check("use_deterministic_backward(): 10 runs bitwise identical, matching the reference")
    def _():
        details = []
        kt.use_deterministic_backward(True)
        try:
            for b, hq, hkv, sq, sk, d, causal, layout, dtype in (
                    (2, 8, 2, 1000, 1000, 128, True, "bhnd", torch.bfloat16),
                    (1, 8, 1, 700, 4097, 64, False, "bnhd", torch.float16)):
                q, k, v, dout = inputs(b, hq, hkv, sq, sk, d, layout, dtype)
                what = describe(b, hq, hkv, sq, sk, d, causal, layout, dtype)
                runs = [kerntune_gradients(q, k, v, dout, causal, layout) for _ in range(10)]
                for i, run in enumerate(runs[1:], 2):
                    for name, first, again in zip(("dq", "dk", "dv"), runs[0], run):
                        assert torch.equal(first, again), f"{what}: {name} of run {i} differs"
                errors = compare(runs[0], reference_gradients(q, k, v, dout, causal, layout),
                                 dtype, what)
                details.append(f"{what}: {max(errors):.1e}")
        finally:
            kt.use_deterministic_backward(False)
        return "; ".join(details)

    finish("test_attention_backward_gpu")


if __name__ == "__main__":
    main()
