"""kerntune.Runtime: a tuning database opened for dispatch, with PyTorch tensor entry points. Every
tensor is checked (checks.py) before a launch."""
import ctypes
import math

from . import checks
from ._ffi import (AttentionArgs, AttentionBackwardArgs, DispatchInfo, RmsnormArgs,
                   RuntimeOptions, RuntimeStats, STATS_GRADES, KT_DTYPES, KT_LAYOUT_NN,
                   KT_LAYOUT_NT, KerntuneError, check, library)

# Runtime(benchmark=True): the configs timed on a first call. On 10 RMSNorm shapes in no suite the
# model's first 8 held a config within 2% of the fastest of the whole space, its first 4 on 5.
DEFAULT_BENCHMARK_CANDIDATES = 8


def _torch(who="kerntune.Runtime"):
    """PyTorch, or a KerntuneError saying how to get it (kerntune does not depend on it)."""
    try:
        import torch
    except ImportError as e:
        raise KerntuneError(6, f"{who} takes PyTorch tensors, but PyTorch cannot be "
                               f"imported ({e}); install it (pip install torch)") from None
    return torch


def cuda_index(device):
    """The index of a CUDA device given as an index, a torch.device or a string ("cuda:1");
    None and a device without an index are the current one."""
    torch = _torch()
    if isinstance(device, int):
        return device
    index = torch.device(device).index if device is not None else None
    return torch.cuda.current_device() if index is None else index


def _stream():
    return ctypes.c_void_p(_torch().cuda.current_stream().cuda_stream)


def _attention_args(dims, q, k, v, out, lse, strides, causal, scale):
    """The C ABI's kt_attention_args of one call: dims (batch, heads_q, heads_kv, seqlen_q,
    seqlen_k, head_dim), the tensors, their checked (batch, row, head) strides."""
    args = AttentionArgs()
    (args.batch, args.heads_q, args.heads_kv, args.seqlen_q, args.seqlen_k, args.head_dim) = dims
    args.dtype, args.causal = KT_DTYPES[checks.describe("q", q).dtype], int(causal)
    args.q, args.k, args.v, args.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr()
    args.lse = lse.data_ptr() if lse is not None else None
    for name, short in (("q", "q"), ("k", "k"), ("v", "v"), ("out", "o")):
        getattr(args, f"{short}_strides")[:] = list(strides[name])
    args.softmax_scale = float(scale) if scale is not None else 1.0 / math.sqrt(dims[5])
    return args


def _benchmark_candidates(benchmark):
    """Runtime(benchmark=...) as kt_runtime_options.benchmark_candidates: 0 defers to
    $KERNTUNE_BENCHMARK, a negative count is off."""
    if benchmark is None:
        return 0
    if benchmark is True:
        return DEFAULT_BENCHMARK_CANDIDATES
    if benchmark is False or benchmark == 0:
        return -1
    if not isinstance(benchmark, int) or not 1 <= benchmark <= 64:
        raise ValueError(f"benchmark={benchmark!r}: give True, False, None or a count of configs "
                         "from 1 to 64 to time on a problem's first call")
    return benchmark


class Runtime:
    """Opens the tuning database (default: $KERNTUNE_DB or ~/.cache/kerntune/kerntune.db) on a
    CUDA device: `device` (an index or a torch.device), else the current one; its tensors must
    live there. Shapes without a tuned winner dispatch from the nearest tuned shape or the model,
    or, with `benchmark`, from the fastest of those choices on their first call. With `record` (a path; default $KERNTUNE_RECORD), every problem
    served without an exact tuned entry is appended to that fleet manifest, which
    `kerntune fleet run --manifest PATH --shard 1/1` tunes. With `benchmark` (as
    torch.backends.cudnn.benchmark: True for 8 configs, or a count), the first call of a problem
    with no measured winner on this device times that many of the dispatch chain's configs on its
    own tensors and keeps the fastest for this runtime's life (grade "benchmarked"); False or 0:
    off; None: $KERNTUNE_BENCHMARK, else off."""

    def __init__(self, database=None, read_only=False, device=None, record=None, benchmark=None):
        benchmark_candidates = _benchmark_candidates(benchmark)
        torch = _torch()
        self._lib = library()
        self._handle = ctypes.c_void_p()
        torch.cuda.init()
        self.device = cuda_index(device)
        options = RuntimeOptions()
        options.struct_size = ctypes.sizeof(RuntimeOptions)
        options.database_path = database.encode() if database else None
        options.read_only = int(read_only)
        options.device_ordinal = self.device
        options.record_path = str(record).encode() if record else None
        options.benchmark_candidates = benchmark_candidates
        # The device's primary context made current, shared with PyTorch.
        with torch.cuda.device(self.device):
            check(self._lib.kt_runtime_open_options(ctypes.byref(options),
                                                    ctypes.byref(self._handle)))

    def close(self):
        if getattr(self, "_handle", None):
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

    def stats(self):
        """What this runtime has served: {"kernels_by_grade": {grade: count}, "cubins_from_database",
        "cubins_compiled", "problems_recorded", "nvrtc_loaded"} (grades as DispatchInfo spells
        them: "exact", "same-model", ...)."""
        out = RuntimeStats()
        check(self._lib.kt_runtime_get_stats(self._handle, ctypes.byref(out)))
        return {"kernels_by_grade": {g.replace("_", "-"): getattr(out, g) for g in STATS_GRADES},
                "cubins_from_database": out.cubins_from_database,
                "cubins_compiled": out.cubins_compiled,
                "problems_recorded": out.problems_recorded,
                "nvrtc_loaded": bool(out.nvrtc_loaded)}

    def gemm(self, a, b, layout="nt", out=None, out_dtype=None):
        """C = a @ b.T (layout "nt": b is (N, K), a linear layer's weight) or a @ b ("nn"). a and
        b are copied when not contiguous; out, when given, must be (M, N) and contiguous. Raises
        KerntuneError naming the tensor before any launch when they do not fit (checks.py)."""
        torch = _torch()
        checks.check_gemm_layout(layout)
        a, b = a.contiguous(), b.contiguous()
        if out is None:
            m = a.shape[0] if a.dim() == 2 else 0
            n = (b.shape[0] if layout == "nt" else b.shape[1]) if b.dim() == 2 else 0
            out = torch.empty(m, n, device=a.device, dtype=out_dtype or a.dtype)
        m, n, k = checks.check_gemm(checks.describe("a", a), checks.describe("b", b),
                                    checks.describe("out", out), layout)
        check(self._lib.kt_gemm(self._handle, m, n, k, KT_DTYPES[checks.describe("a", a).dtype],
                                KT_DTYPES[checks.describe("out", out).dtype],
                                KT_LAYOUT_NT if layout == "nt" else KT_LAYOUT_NN,
                                ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()),
                                ctypes.c_void_p(out.data_ptr()), _stream()))
        return out

    def attention(self, q, k, v, causal=False, scale=None, layout="bhnd", return_lse=False, out=None):
        """Attention forward. layout "bhnd": tensors are (B, H, N, d) like SDPA; "bnhd": (B, N, H, d)
        like FlashAttention. Any strides with a contiguous head_dim work without copies.
        Returns O (and the (B, Hq, Nq) FP32 logsumexp when return_lse). Raises KerntuneError
        naming the tensor before any launch when they do not fit (checks.py)."""
        torch = _torch()
        if out is None:
            out = torch.empty_like(q)
        lse = None
        if return_lse and q.dim() == 4 and layout in checks.ATTENTION_LAYOUTS:
            b, hq, sq = (q.shape[0], q.shape[1], q.shape[2]) if layout == "bhnd" else \
                (q.shape[0], q.shape[2], q.shape[1])
            lse = torch.empty(b, hq, sq, device=q.device, dtype=torch.float32)
        (b, hq, hkv, sq, sk, d), strides = checks.check_attention(
            checks.describe("q", q), checks.describe("k", k), checks.describe("v", v),
            checks.describe("out", out), checks.optional_info("lse", lse), layout, scale)
        args = _attention_args((b, hq, hkv, sq, sk, d), q, k, v, out, lse, strides, causal, scale)
        check(self._lib.kt_attention_forward(self._handle, ctypes.byref(args), _stream()))
        return (out, lse) if return_lse else out

    def attention_backward(self, q, k, v, o, dout, lse, causal=False, scale=None, layout="bhnd",
                           deterministic=False):
        """The gradients (dq, dk, dv) of attention(q, k, v) given dout, the forward's output o and
        its (B, Hq, Nq) float32 logsumexp (attention(..., return_lse=True)); dk and dv of a KV head
        summed over its query heads. deterministic: dq summed in a fixed order (bitwise
        reproducible). Layouts and strides as attention(); head_dim 64, 96, 128 or 256. Raises
        KerntuneError naming the tensor before any launch."""
        torch = _torch()
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        (b, hq, hkv, sq, sk, d), strides = checks.check_attention(
            checks.describe("q", q), checks.describe("k", k), checks.describe("v", v),
            checks.describe("o", o), checks.describe("lse", lse), layout, scale)
        (_, _, _, _, _, _), grads = checks.check_attention(
            checks.describe("dout", dout), checks.describe("dk", dk), checks.describe("dv", dv),
            checks.describe("dq", dq), None, layout, scale)
        args = AttentionBackwardArgs()
        args.batch, args.heads_q, args.heads_kv = b, hq, hkv
        args.seqlen_q, args.seqlen_k, args.head_dim = sq, sk, d
        args.dtype = KT_DTYPES[checks.describe("q", q).dtype]
        args.causal, args.deterministic = int(causal), int(deterministic)
        for name, tensor in (("q", q), ("k", k), ("v", v), ("o", o), ("dout", dout), ("dq", dq),
                             ("dk", dk), ("dv", dv)):
            setattr(args, name, tensor.data_ptr())
            getattr(args, f"{name}_strides")[:] = list({**strides, **grads}[name])
        args.lse = lse.data_ptr()
        args.softmax_scale = float(scale) if scale is not None else 1.0 / math.sqrt(d)
        check(self._lib.kt_attention_backward(self._handle, ctypes.byref(args), _stream()))
        return dq, dk, dv

    def attention_varlen(self, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                         causal=False, scale=None, return_lse=False, out=None):
        """Attention forward over a packed variable-length batch, as flash_attn_varlen_func takes
        it: q (total_q, Hq, d), k and v (total_k, Hkv, d), cu_seqlens_q / cu_seqlens_k int32
        (batch + 1) row offsets, max_seqlen_q / max_seqlen_k the longest sequence's lengths;
        causal masks each sequence on its own (bottom-right aligned). Returns O (total_q, Hq, d)
        (and the (Hq, total_q) FP32 logsumexp when return_lse). Batches of similar lengths share
        one tuned kernel (`kerntune tune --op attention --shape b=..,sq=..,tq=..`)."""
        torch = _torch()
        if out is None:
            out = torch.empty_like(q)
        lse = None
        if return_lse and q.dim() == 3:
            lse = torch.empty(q.shape[1], q.shape[0], device=q.device, dtype=torch.float32)
        (b, hq, hkv, total_q, total_k, d), strides = checks.check_attention_varlen(
            checks.describe("q", q), checks.describe("k", k), checks.describe("v", v),
            checks.describe("out", out), checks.optional_info("lse", lse),
            checks.describe("cu_seqlens_q", cu_seqlens_q),
            checks.describe("cu_seqlens_k", cu_seqlens_k), int(max_seqlen_q), int(max_seqlen_k),
            scale)
        args = _attention_args((b, hq, hkv, int(max_seqlen_q), int(max_seqlen_k), d), q, k, v, out,
                               lse, strides, causal, scale)
        check(self._lib.kt_attention_varlen(
            self._handle, ctypes.byref(args), ctypes.c_void_p(cu_seqlens_q.data_ptr()),
            ctypes.c_void_p(cu_seqlens_k.data_ptr()), total_q, total_k, _stream()))
        return (out, lse) if return_lse else out

    def rmsnorm(self, x, weight, eps=1e-6, residual=None, out=None, residual_out=None):
        """y = x * rsqrt(mean(x**2, -1) + eps) * weight over the last dimension (FP32 inside).
        With residual: x = x + residual first, written to residual_out, by default residual
        itself (in place, as fused add-RMSNorm layers do); returns (y, that sum) then, else y.
        Raises KerntuneError naming the tensor before any launch when they do not fit
        (checks.py)."""
        torch = _torch()
        if residual_out is not None and residual is None:
            raise KerntuneError(checks.KT_ERROR_INVALID_ARGUMENT,
                                "residual_out is where x + residual goes: pass residual too")
        rows, hidden = checks.check_rmsnorm(
            checks.describe("x", x), checks.describe("weight", weight),
            checks.optional_info("residual", residual), checks.optional_info("out", out), eps)
        if residual_out is not None:
            checks.check_rmsnorm(checks.describe("x", x), checks.describe("weight", weight),
                                 checks.describe("residual_out", residual_out), None, eps)
        else:
            residual_out = residual
        if out is None:
            out = torch.empty_like(x)
        args = RmsnormArgs()
        args.rows, args.hidden, args.dtype = rows, hidden, KT_DTYPES[str(x.dtype).replace("torch.", "")]
        args.x, args.weight, args.y = x.data_ptr(), weight.data_ptr(), out.data_ptr()
        if residual is not None:
            args.residual, args.residual_out = residual.data_ptr(), residual_out.data_ptr()
        args.eps = float(eps)
        check(self._lib.kt_rmsnorm(self._handle, ctypes.byref(args), _stream()))
        return (out, residual_out) if residual is not None else out
