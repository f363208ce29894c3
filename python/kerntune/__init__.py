"""kerntune for Python: the runtime's C ABI through ctypes (no compiled extension), with PyTorch
entry points that take tensors, so a script can compare kerntune with
torch.nn.functional.scaled_dot_product_attention or torch.matmul in one process.

    import kerntune, torch
    rt = kerntune.Runtime()                      # $KERNTUNE_DB or ~/.cache/kerntune/kerntune.db
    o = rt.attention(q, k, v, causal=True)       # q: (B, Hq, N, d), k/v: (B, Hkv, N, d)
    o, lse = rt.attention(q, k, v, return_lse=True, layout="bnhd")   # FlashAttention layout
    c = rt.gemm(a, w)                            # a: (M, K), w: (N, K) -> (M, N) = a @ w.T

kerntune.ops (import it: it needs PyTorch 2.4 or newer) has the same kernels as PyTorch custom
operators with fake implementations, for torch.compile.
"""
from . import checks  # noqa: F401
from ._ffi import KerntuneError, library, version  # noqa: F401
from .runtime import Runtime  # noqa: F401

__all__ = ["Runtime", "KerntuneError", "checks", "library", "version"]
