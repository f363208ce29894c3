"""kerntune's attention and gemm from PyTorch, against torch on the same tensors (GPU machine).
Run: python3 -m pytest python/tests (skips without CUDA)."""
import itertools
import math
import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import kerntune  # noqa: E402


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    return kerntune.Runtime(str(tmp_path_factory.mktemp("db") / "kerntune.db"))


def reference(q, k, v, causal, scale):
    """float32 attention in (B, H, N, d), GQA by repeating K/V, causal bottom-right aligned."""
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    k = k.float().repeat_interleave(hq // hkv, dim=1)
    v = v.float().repeat_interleave(hq // hkv, dim=1)
    s = torch.einsum("bhqd,bhkd->bhqk", q.float(), k) * scale
    if causal:
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(sk, device=q.device)[None, :]
        s = s.masked_fill(j > i + (sk - sq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return torch.einsum("bhqk,bhkd->bhqd", p, v), lse


@pytest.mark.parametrize("b,hq,hkv,sq,sk,d,causal", [
    (2, 4, 4, 1, 1, 128, False), (2, 4, 4, 127, 127, 128, True), (1, 8, 2, 1000, 1000, 64, True),
    (1, 4, 4, 300, 100, 128, True), (1, 4, 1, 77, 2000, 128, False), (1, 2, 2, 513, 513, 256, True),
    (2, 4, 4, 4097, 4097, 128, False)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_attention_matches_float32_reference(rt, b, hq, hkv, sq, sk, d, causal, dtype):
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype)
    k = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype)
    v = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype)
    scale = 1 / math.sqrt(d)
    o, lse = rt.attention(q, k, v, causal=causal, return_lse=True)
    want, want_lse = reference(q, k, v, causal, scale)
    err = (o.float() - want).norm() / want.norm().clamp_min(1e-6)
    assert err < (2e-2 if dtype == torch.bfloat16 else 5e-3), err
    finite = torch.isfinite(want_lse)
    assert torch.equal(finite, torch.isfinite(lse))
    assert torch.allclose(lse[finite], want_lse[finite], atol=2e-2, rtol=1e-3)


def test_bnhd_layout_without_copies_matches_sdpa(rt):
    q = torch.randn(2, 512, 8, 128, device="cuda", dtype=torch.bfloat16)  # (B, N, H, d)
    k, v = torch.randn_like(q), torch.randn_like(q)
    o = rt.attention(q, k, v, causal=True, layout="bnhd")
    want = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2)
    assert ((o.float() - want.float()).norm() / want.float().norm()) < 2e-2


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("hq,hkv,d", [(8, 2, 128), (4, 1, 64), (2, 2, 256)])
def test_attention_varlen_matches_each_sequence(rt, causal, hq, hkv, d):
    """A packed batch of ragged lengths (1, 127, 1000, 4097 among them; Nq != Nk per sequence)
    against an FP32 reference per sequence, O and the (Hq, total_q) logsumexp."""
    lq = [1, 127, 1000, 4097, 300, 64]
    lk = [1, 200, 1000, 4097, 77, 65]
    cu_q = torch.tensor([0] + list(itertools.accumulate(lq)), dtype=torch.int32,
                        device="cuda")
    cu_k = torch.tensor([0] + list(itertools.accumulate(lk)), dtype=torch.int32,
                        device="cuda")
    q = torch.randn(sum(lq), hq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(sum(lk), hkv, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    o, lse = rt.attention_varlen(q, k, v, cu_q, cu_k, max(lq), max(lk), causal=causal,
                                 return_lse=True)
    for i in range(len(lq)):
        qs = q[cu_q[i]:cu_q[i + 1]].transpose(0, 1)[None]
        ks = k[cu_k[i]:cu_k[i + 1]].transpose(0, 1)[None]
        vs = v[cu_k[i]:cu_k[i + 1]].transpose(0, 1)[None]
        want, want_lse = reference(qs, ks, vs, causal, 1 / math.sqrt(d))
        got = o[cu_q[i]:cu_q[i + 1]].transpose(0, 1)[None].float()
        err = (got - want).norm() / want.norm().clamp_min(1e-6)
        assert err < 2e-2, (i, err)
        got_lse = lse[:, cu_q[i]:cu_q[i + 1]][None]
        finite = torch.isfinite(want_lse)
        assert torch.equal(finite, torch.isfinite(got_lse)), i
        assert torch.allclose(got_lse[finite], want_lse[finite], atol=2e-2, rtol=1e-3), i


def test_gemm_matches_torch(rt):
    a = torch.randn(1000, 512, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(768, 512, device="cuda", dtype=torch.bfloat16)
    c = rt.gemm(a, w)
    want = a.float() @ w.float().T
    assert ((c.float() - want).norm() / want.norm()) < 1e-2


def test_bad_input_raises_with_the_library_message(rt):
    q = torch.randn(1, 2, 16, 80, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(kerntune.KerntuneError, match="head_dim"):
        rt.attention(q, q, q)
