"""kerntune.Runtime: a tuning database opened for dispatch, with PyTorch tensor entry points."""
import ctypes
import math

from ._ffi import AttentionArgs, DispatchInfo, RmsnormArgs, KT_DTYPES, KT_LAYOUT_NN, KT_LAYOUT_NT, check, library


def _dtype_code(tensor):
    name = str(tensor.dtype).replace("torch.", "")
    if name not in KT_DTYPES:
        raise TypeError(f"kerntune supports bfloat16 and float16 tensors, got {tensor.dtype}")
    return KT_DTYPES[name]


def _stream():
    import torch
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


class Runtime:
    """Opens the tuning database (default: $KERNTUNE_DB or ~/.cache/kerntune/kerntune.db) on the
    current CUDA device. Shapes without a tuned winner dispatch from the nearest tuned shape or
    the model; nothing is tuned on the fly."""

    def __init__(self, database=None, read_only=False):
        import torch
        torch.cuda.init()  # make the primary context current, shared with PyTorch
        self._lib = library()
        self._handle = ctypes.c_void_p()
        path = database.encode() if database else None
        check(self._lib.kt_runtime_open(path, int(read_only), ctypes.byref(self._handle)))

    def close(self):
        if self._handle:
            self._lib.kt_runtime_close(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()

    def prepare(self, problem_key, variant=""):
        """Resolves and loads the kernel of a problem key ("gemm:...", "attn:...", "rmsnorm:...")
        without launching; returns (config_key, grade, predicted)."""
        info = DispatchInfo()
        check(self._lib.kt_prepare(self._handle, problem_key.encode(), variant.encode(),
                                   ctypes.byref(info)))
        return info.config_key.decode(), info.grade.decode(), bool(info.predicted)

    def gemm(self, a, b, layout="nt", out=None, out_dtype=None):
        """C = a @ b.T (layout "nt": b is (N, K), a linear layer's weight) or a @ b ("nn")."""
        import torch
        if a.dim() != 2 or b.dim() != 2:
            raise ValueError("gemm takes 2-D tensors")
        m, k = a.shape
        n = b.shape[0] if layout == "nt" else b.shape[1]
        if (b.shape[1] if layout == "nt" else b.shape[0]) != k:
            raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)} ({layout})")
        a, b = a.contiguous(), b.contiguous()
        if out is None:
            out = torch.empty(m, n, device=a.device, dtype=out_dtype or a.dtype)
        check(self._lib.kt_gemm(self._handle, m, n, k, _dtype_code(a), KT_DTYPES[str(out.dtype).replace("torch.", "")],
                                KT_LAYOUT_NT if layout == "nt" else KT_LAYOUT_NN,
                                ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()),
                                ctypes.c_void_p(out.data_ptr()), _stream()))
        return out

    def attention(self, q, k, v, causal=False, scale=None, layout="bhnd", return_lse=False, out=None):
        """Attention forward. layout "bhnd": tensors are (B, H, N, d) like SDPA; "bnhd": (B, N, H, d)
        like FlashAttention. Any strides with a contiguous head_dim work without copies.
        Returns O (and the (B, Hq, Nq) FP32 logsumexp when return_lse)."""
        import torch
        if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
            raise ValueError("attention takes 4-D tensors")
        if layout == "bhnd":
            (b, hq, sq, d), (_, hkv, sk, _) = q.shape, k.shape
            dims = (0, 2, 1)  # batch, row, head strides
        elif layout == "bnhd":
            (b, sq, hq, d), (_, sk, hkv, _) = q.shape, k.shape
            dims = (0, 1, 2)
        else:
            raise ValueError(f"layout must be 'bhnd' or 'bnhd', got {layout!r}")
        if out is None:
            out = torch.empty_like(q)
        lse = torch.empty(b, hq, sq, device=q.device, dtype=torch.float32) if return_lse else None
        args = AttentionArgs()
        args.batch, args.heads_q, args.heads_kv = b, hq, hkv
        args.seqlen_q, args.seqlen_k, args.head_dim = sq, sk, d
        args.dtype, args.causal = _dtype_code(q), int(causal)
        args.q, args.k, args.v, args.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr()
        args.lse = lse.data_ptr() if lse is not None else None
        for name, t in (("q", q), ("k", k), ("v", v), ("o", out)):
            if t.stride(3) != 1:
                raise ValueError(f"{name} must have a contiguous head_dim (stride 1)")
            getattr(args, f"{name}_strides")[:] = [t.stride(i) for i in dims]
        args.softmax_scale = float(scale) if scale is not None else 1.0 / math.sqrt(d)
        check(self._lib.kt_attention_forward(self._handle, ctypes.byref(args), _stream()))
        return (out, lse) if return_lse else out

    def rmsnorm(self, x, weight, eps=1e-6, residual=None, out=None):
        """y = x * rsqrt(mean(x**2, -1) + eps) * weight over the last dimension (FP32 inside).
        With residual: x = x + residual first, written back into residual (in place, as fused
        add-RMSNorm layers do); returns (y, residual) then, else y. Tensors are contiguous, on
        one CUDA device, of one dtype (bfloat16 or float16)."""
        import torch
        hidden = x.shape[-1]
        rows = x.numel() // hidden if hidden else 0
        named = [("x", x), ("weight", weight)] + ([("residual", residual)] if residual is not None else [])
        if out is not None:
            named.append(("out", out))
        for name, t in named:
            if not t.is_cuda or t.device != x.device:
                raise ValueError(f"rmsnorm: {name} is on {t.device}, x on {x.device}: all on one CUDA device")
            if t.dtype != x.dtype:
                raise ValueError(f"rmsnorm: {name} is {t.dtype}, x is {x.dtype}: one dtype for all")
            if not t.is_contiguous():
                raise ValueError(f"rmsnorm: {name} is not contiguous (rows must be dense)")
        if weight.shape != (hidden,):
            raise ValueError(f"rmsnorm: weight has shape {tuple(weight.shape)}, expected ({hidden},)")
        for name, t in named[2:]:
            if t.shape != x.shape:
                raise ValueError(f"rmsnorm: {name} has shape {tuple(t.shape)}, x {tuple(x.shape)}")
        if out is None:
            out = torch.empty_like(x)
        args = RmsnormArgs()
        args.rows, args.hidden, args.dtype = rows, hidden, _dtype_code(x)
        args.x, args.weight, args.y = x.data_ptr(), weight.data_ptr(), out.data_ptr()
        if residual is not None:
            args.residual = args.residual_out = residual.data_ptr()
        args.eps = float(eps)
        check(self._lib.kt_rmsnorm(self._handle, ctypes.byref(args), _stream()))
        return (out, residual) if residual is not None else out
