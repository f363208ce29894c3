"""kerntune.ops on a GPU with PyTorch 2.4 or newer (the GPU machine; CTest python.ops_gpu, label
gpu):

    PYTHONPATH=python python3 python/tests/test_ops_gpu.py     # KERNTUNE_LIB, or dist/ or build/

A small attention block (fused add + RMSNorm, a QKV projection, causal GQA attention on (B, N, H,
d) views of it, the output projection, RMSNorm) calls kerntune.ops.gemm, attention and rmsnorm;
torch._dynamo.explain must see one graph and no graph break, torch.compile(fullgraph=True) must
run it and match eager, and eager must match a float32 PyTorch reference, on fresh random data
(the seed is printed). Then each op alone against its reference (N-D and transposed operands,
the logsumexp, the residual sum) and torch.library.opcheck on each. A plain script: it prints
every check, and exits 1 when any failed, 77 when it cannot run here (no CUDA, PyTorch < 2.4)."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gpu_checks import (attention_reference, check, expect_close, finish,  # noqa: E402
                        require_gpu_and_custom_ops, start)

torch, kt = require_gpu_and_custom_ops("test_ops_gpu")
import kerntune  # noqa: E402

BF16 = torch.bfloat16


def rmsnorm_reference(x, weight, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()).to(x.dtype)


# ---- the block ---------------------------------------------------------------------------------

class Block(torch.nn.Module):
    """x, residual (B, N, hidden) -> (out, x + residual): add + RMSNorm, QKV, causal GQA
    attention on views of the QKV projection, output projection, RMSNorm."""

    def __init__(self, hidden=1024, heads=8, kv_heads=2, head_dim=128, eps=1e-6):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.eps = heads, kv_heads, head_dim, eps
        qkv = (heads + 2 * kv_heads) * head_dim

        def weight(*shape):
            return torch.nn.Parameter(torch.randn(*shape, device="cuda", dtype=BF16) /
                                      math.sqrt(shape[-1]), requires_grad=False)
        self.norm1 = torch.nn.Parameter(1 + 0.1 * torch.randn(hidden, device="cuda", dtype=BF16),
                                        requires_grad=False)
        self.norm2 = torch.nn.Parameter(1 + 0.1 * torch.randn(hidden, device="cuda", dtype=BF16),
                                        requires_grad=False)
        self.wqkv = weight(qkv, hidden)
        self.wo = weight(hidden, heads * head_dim)

    def split(self, qkv):
        b, n, _ = qkv.shape
        hq, hkv, d = self.heads, self.kv_heads, self.head_dim
        q, k, v = qkv.split([hq * d, hkv * d, hkv * d], dim=-1)
        return q.view(b, n, hq, d), k.view(b, n, hkv, d), v.view(b, n, hkv, d)

    def forward(self, x, residual):
        h, total = kt.rmsnorm(x, self.norm1, eps=self.eps, residual=residual)
        q, k, v = self.split(kt.gemm(h, self.wqkv))  # (B, N, H, d) strided views, no copies
        o = kt.attention(q, k, v, causal=True, layout="bnhd")
        y = kt.gemm(o.flatten(2), self.wo)
        return kt.rmsnorm(y + total, self.norm2, eps=self.eps), total

    def reference(self, x, residual):
        total = (x.float() + residual.float()).to(BF16)
        h = rmsnorm_reference(total, self.norm1, self.eps)
        q, k, v = self.split((h.float() @ self.wqkv.float().t()).to(BF16))
        o, _ = attention_reference(q, k, v, True, "bnhd")
        y = (o.flatten(2).float() @ self.wo.float().t()).to(BF16)
        return rmsnorm_reference(y + total, self.norm2, self.eps), total


def main():
    start("test_ops_gpu")
    block = Block()
    batch, tokens, hidden = 2, 256, 1024

    def inputs():
        return (torch.randn(batch, tokens, hidden, device="cuda", dtype=BF16),
                torch.randn(batch, tokens, hidden, device="cuda", dtype=BF16))

    with torch.no_grad():
        @check("eager block matches the float32 reference")
        def _():
            x, r = inputs()
            (out, total), (want, want_total) = block(x, r), block.reference(x, r)
            return ", ".join([expect_close(out, want, 2e-2, "out"),
                              expect_close(total, want_total, 1e-2, "x + residual")])

        @check("torch._dynamo.explain: one graph, no graph break")
        def _():
            torch._dynamo.reset()
            explanation = torch._dynamo.explain(block)(*inputs())
            assert explanation.graph_count == 1 and explanation.graph_break_count == 0, (
                f"{explanation.graph_count} graphs, {explanation.graph_break_count} breaks: "
                f"{explanation.break_reasons}")
            ops = [str(op) for graph_ops in getattr(explanation, "ops_per_graph", [])
                   for op in graph_ops]
            used = sorted({op for op in ops if "kerntune" in op})
            return f"1 graph, kerntune ops in it: {', '.join(used)}"

        @check("torch.compile(fullgraph=True) matches eager on fresh data")
        def _():
            torch._dynamo.reset()
            compiled = torch.compile(block, fullgraph=True)
            details = []
            for _ in range(2):
                x, r = inputs()
                (out, total), (want, want_total) = compiled(x, r), block(x, r)
                details += [expect_close(out, want, 1e-2, "out"),
                            expect_close(total, want_total, 1e-3, "x + residual")]
            return ", ".join(details)

        @check("gemm: N-D a, transposed and nn weights, float32 out")
        def _():
            a = torch.randn(3, 5, 512, device="cuda", dtype=BF16)
            w = torch.randn(384, 512, device="cuda", dtype=BF16)
            want = (a.float() @ w.float().t())
            w_kn = w.t().contiguous()  # (K, N): passed as w_kn.t() without a copy
            return ", ".join([
                expect_close(kt.gemm(a, w), want.to(BF16), 1e-2, "nt"),
                expect_close(kt.gemm(a, w_kn.t()), want.to(BF16), 1e-2, "nt of a transpose"),
                expect_close(kt.gemm(a, w_kn, layout="nn"), want.to(BF16), 1e-2, "nn"),
                expect_close(kt.gemm(a, w, out_dtype=torch.float32), want, 1e-2, "fp32 out")])

        @check("attention: bhnd and bnhd, GQA, the logsumexp")
        def _():
            q = torch.randn(2, 8, 300, 128, device="cuda", dtype=BF16)
            k = torch.randn(2, 2, 300, 128, device="cuda", dtype=BF16)
            v = torch.randn(2, 2, 300, 128, device="cuda", dtype=BF16)
            o, lse = kt.attention(q, k, v, causal=True, return_lse=True)
            want, want_lse = attention_reference(q, k, v, True)
            o2 = kt.attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                              causal=True, layout="bnhd")
            return ", ".join([expect_close(o, want, 2e-2, "bhnd"),
                              expect_close(lse, want_lse, 1e-3, "lse"),
                              expect_close(o2, want.transpose(1, 2), 2e-2, "bnhd views")])

        @check("rmsnorm: plain, with the residual sum (residual untouched), a non-contiguous x")
        def _():
            x = torch.randn(64, 4096, device="cuda", dtype=BF16)
            r = torch.randn_like(x)
            g = torch.randn(4096, device="cuda", dtype=BF16)
            r_before = r.clone()
            y, total = kt.rmsnorm(x, g, eps=1e-5, residual=r)
            assert torch.equal(r, r_before), "the residual was written (the op is functional)"
            want_total = (x.float() + r.float()).to(BF16)
            strided = torch.randn(4096, 64, device="cuda", dtype=BF16).t()
            return ", ".join([
                expect_close(kt.rmsnorm(x, g), rmsnorm_reference(x, g, 1e-6), 1e-2, "plain"),
                expect_close(total, want_total, 1e-3, "sum"),
                expect_close(y, rmsnorm_reference(want_total, g, 1e-5), 1e-2, "y"),
                expect_close(kt.rmsnorm(strided, g), rmsnorm_reference(strided, g, 1e-6), 1e-2,
                             "strided x")])

        @check("wrong arguments raise KerntuneError naming the tensor")
        def _():
            a = torch.randn(4, 64, device="cuda", dtype=BF16)
            try:
                kt.gemm(a, torch.randn(8, 64, device="cuda", dtype=torch.float16))
            except kerntune.KerntuneError as e:
                assert "b is float16" in str(e), e
                return str(e)
            raise AssertionError("no KerntuneError")

    # Gradients need autograd on: outside the no_grad block above.
    @check("attention backward through autograd: GQA causal and full vs float32 gradients")
    def _():
        results = []
        for causal, d in ((True, 128), (False, 64)):
            q = torch.randn(2, 8, 300, d, device="cuda", dtype=BF16, requires_grad=True)
            k = torch.randn(2, 2, 300, d, device="cuda", dtype=BF16, requires_grad=True)
            v = torch.randn(2, 2, 300, d, device="cuda", dtype=BF16, requires_grad=True)
            dout = torch.randn(2, 8, 300, d, device="cuda", dtype=BF16)
            kt.attention(q, k, v, causal=causal).backward(dout)
            got = [t.grad.clone() for t in (q, k, v)]
            qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
            want, _ = attention_reference(qf, kf, vf, causal)
            want.backward(dout.float())
            for name, g, w in zip(("dq", "dk", "dv"), got, (qf.grad, kf.grad, vf.grad)):
                results.append(expect_close(g, w.to(g.dtype), 2e-2, f"{name} d{d}"))
        return ", ".join(results)

    @check("attention backward under torch.compile and deterministic mode")
    def _():
        q = torch.randn(1, 4, 256, 128, device="cuda", dtype=BF16, requires_grad=True)
        k = torch.randn(1, 2, 256, 128, device="cuda", dtype=BF16, requires_grad=True)
        v = torch.randn(1, 2, 256, 128, device="cuda", dtype=BF16, requires_grad=True)
        dout = torch.randn(1, 4, 256, 128, device="cuda", dtype=BF16)

        def loss(q, k, v):
            return (kt.attention(q, k, v, causal=True) * dout).sum()

        compiled = torch.compile(loss, fullgraph=True)
        eager = torch.autograd.grad(loss(q, k, v), (q, k, v))
        traced = torch.autograd.grad(compiled(q, k, v), (q, k, v))
        kt.use_deterministic_backward(True)
        try:
            runs = [torch.autograd.grad(loss(q, k, v), (q, k, v)) for _ in range(3)]
        finally:
            kt.use_deterministic_backward(False)
        same = all(torch.equal(a, b) for run in runs[1:] for a, b in zip(runs[0], run))
        assert same, "deterministic gradients differ between runs"
        return ", ".join([expect_close(t, e, 1e-2, f"compiled {n}")
                          for n, t, e in zip(("dq", "dk", "dv"), traced, eager)] +
                         ["deterministic: 3 runs bitwise equal"])

    @check("torch.library.opcheck on every op")
    def _():
        q = torch.randn(1, 4, 128, 64, device="cuda", dtype=BF16)
        k = torch.randn(1, 2, 128, 64, device="cuda", dtype=BF16)
        o, lse = kt.attention(q, k, k, causal=True, return_lse=True)
        x = torch.randn(16, 1024, device="cuda", dtype=BF16)
        g = torch.randn(1024, device="cuda", dtype=BF16)
        cases = {
            "gemm": (torch.ops.kerntune.gemm.default,
                     (torch.randn(2, 8, 256, device="cuda", dtype=BF16),
                      torch.randn(128, 256, device="cuda", dtype=BF16), "nt", "")),
            "attention": (torch.ops.kerntune.attention.default, (q, k, k, True, None, "bhnd")),
            "attention_lse": (torch.ops.kerntune.attention_lse.default,
                              (q, k, k, False, 0.125, "bhnd")),
            # deterministic: opcheck compares runs, and dQ's atomic sums differ in the last bit
            "attention_backward": (torch.ops.kerntune.attention_backward.default,
                                   (q, k, k, o, torch.randn_like(q), lse, True, None, "bhnd",
                                    True)),
            "rmsnorm": (torch.ops.kerntune.rmsnorm.default, (x, g, 1e-6)),
            "add_rmsnorm": (torch.ops.kerntune.add_rmsnorm.default, (x, torch.randn_like(x), g,
                                                                      1e-6)),
        }
        for name, (op, args) in cases.items():
            torch.library.opcheck(op, args)
        return ", ".join(cases)

    finish("test_ops_gpu")


if __name__ == "__main__":
    main()
