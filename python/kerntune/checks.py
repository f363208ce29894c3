"""The checks every tensor passes before kerntune launches on it: device, dtype, shape, strides,
alignment and layout against the op, by the C ABI's rules (src/ops/<op>/<op>_call_check.cpp)
and the ones it cannot see (shapes and devices). Pure functions over TensorInfo, so they run
without torch; a failure is a KerntuneError naming the tensor."""
import math
from typing import NamedTuple, Optional, Tuple

from ._ffi import KT_DTYPES, KerntuneError

KT_ERROR_INVALID_ARGUMENT = 1
INPUT_DTYPES = ("bfloat16", "float16")
ELEMENT_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
GEMM_LAYOUTS = ("nt", "nn")
ATTENTION_LAYOUTS = ("bhnd", "bnhd")


class TensorInfo(NamedTuple):
    """What the checks need of a tensor: shape and strides in elements, dtype as torch names it
    without "torch." ("bfloat16"), device as torch prints it ("cuda:0", "cpu"), the address."""
    name: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    dtype: str
    device: str
    data_ptr: int


def describe(name, tensor):
    """The TensorInfo of a torch tensor."""
    return TensorInfo(name, tuple(tensor.shape), tuple(tensor.stride()),
                      str(tensor.dtype).replace("torch.", ""), str(tensor.device),
                      tensor.data_ptr())


def _fail(message):
    raise KerntuneError(KT_ERROR_INVALID_ARGUMENT, message)


def _check_rank(t, rank, what):
    if len(t.shape) != rank:
        _fail(f"{t.name} has shape {t.shape}: {what} takes {rank}-D tensors")


def _check_devices(tensors):
    """Every tensor on one CUDA device."""
    first = tensors[0]
    for t in tensors:
        if not t.device.startswith("cuda"):
            _fail(f"{t.name} is on {t.device}: kerntune runs on CUDA tensors (move it with .cuda())")
        if t.device != first.device:
            _fail(f"{t.name} is on {t.device} but {first.name} is on {first.device}: every tensor "
                  "of a call must be on one device")


def _check_dtype(t, allowed, like=None):
    if t.dtype not in allowed:
        _fail(f"{t.name} is {t.dtype}: expected one of {', '.join(allowed)}")
    if like is not None and t.dtype != like.dtype:
        _fail(f"{t.name} is {t.dtype} but {like.name} is {like.dtype}: they must have one dtype")


def _check_shape(t, expected, why):
    if tuple(t.shape) != tuple(expected):
        _fail(f"{t.name} has shape {t.shape}, expected {tuple(expected)} ({why})")


def _check_row_major(t):
    """A 2-D tensor stored row after row without gaps (the C ABI's GEMM takes no strides)."""
    rows, cols = t.shape
    if (cols > 1 and t.strides[1] != 1) or (rows > 1 and t.strides[0] != cols):
        _fail(f"{t.name} has strides {t.strides} for shape {t.shape}: kerntune's GEMM needs it "
              f"contiguous and row-major, strides ({cols}, 1) (not transposed; use .contiguous())")


def _check_aligned(t, alignment, why):
    if t.data_ptr % alignment != 0:
        _fail(f"{t.name} at {t.data_ptr:#x} is not {alignment}-byte aligned ({why})")


def check_gemm_layout(layout):
    if layout not in GEMM_LAYOUTS:
        _fail(f"layout must be 'nt' (b is (N, K)) or 'nn' (b is (K, N)), got {layout!r}")


def check_gemm(a, b, out, layout):
    """Checks C = a @ b.T (layout "nt": b is (N, K)) or a @ b ("nn": b is (K, N)) into out (M, N):
    one CUDA device; a and b bfloat16 or float16 alike, out bfloat16, float16 or float32; the
    shapes agree; all three contiguous row-major; aligned as the kernel loads them. Returns
    (m, n, k)."""
    check_gemm_layout(layout)
    for t in (a, b, out):
        _check_rank(t, 2, "gemm")
    _check_devices([a, b, out])
    _check_dtype(a, INPUT_DTYPES)
    _check_dtype(b, INPUT_DTYPES, like=a)
    _check_dtype(out, tuple(KT_DTYPES))
    m, k = a.shape
    n = b.shape[0] if layout == "nt" else b.shape[1]
    b_k = b.shape[1] if layout == "nt" else b.shape[0]
    if b_k != k:
        _fail(f"{b.name} has shape {b.shape}, but {a.name} {a.shape} needs K = {k} "
              f"(layout {layout!r}: b is {'(N, K)' if layout == 'nt' else '(K, N)'})")
    _check_shape(out, (m, n), f"{a.name} is (M, K) = {a.shape}, so the product is (M, N)")
    for t in (a, b, out):
        _check_row_major(t)
    # The C ABI's rules (src/ops/gemm/gemm_call_check.cpp): an operand of 16-byte rows (A: K % 8
    # == 0; B: K % 8 == 0 for nt, N % 8 == 0 for nn) is loaded 16 bytes at a time; nn's B of other
    # even N is copied as wide as its rows are aligned (8 bytes for N % 4 == 0, else 4).
    for t, row in ((a, k), (b, k if layout == "nt" else n)):
        if row % 8 == 0:
            _check_aligned(t, 16, f"16 bytes on the vectorized path for rows of {row} elements")
        elif t is b and row % 2 == 0:
            width = 8 if row % 4 == 0 else 4
            _check_aligned(t, width, f"its rows of N = {row} are, and the sm90 family copies "
                                     f"them {width} bytes at a time")
        else:
            _check_aligned(t, ELEMENT_BYTES[t.dtype], "its element size")
    _check_aligned(out, ELEMENT_BYTES[out.dtype], "its element size")
    return m, n, k


def attention_dims(t, layout):
    """(batch, heads, seqlen, head_dim) of a 4-D tensor in `layout` and the strides of batch,
    row and head, in elements."""
    if layout == "bhnd":
        (b, h, n, d), (sb, sh, sn, _) = t.shape, t.strides
    else:
        (b, n, h, d), (sb, sn, sh, _) = t.shape, t.strides
    return (b, h, n, d), (sb, sn, sh)


def check_attention(q, k, v, out, lse, layout, scale):
    """Checks an attention forward: layout "bhnd" (B, H, N, d) or "bnhd" (B, N, H, d); one CUDA
    device; q, k, v and out of one dtype, bfloat16 or float16; k and v the same shape, with q's
    batch and head_dim and a head count that divides q's; out q's shape; head_dim contiguous and
    the other strides >= 0 and multiples of 8; 16-byte aligned; lse (when given) float32
    (B, Hq, Nq) contiguous; scale (when given) finite and >= 0. Returns
    ((b, hq, hkv, sq, sk, d), {name: (batch, row, head strides)})."""
    if layout not in ATTENTION_LAYOUTS:
        _fail(f"layout must be 'bhnd' (B, H, N, d) or 'bnhd' (B, N, H, d), got {layout!r}")
    tensors = [q, k, v, out] + ([lse] if lse is not None else [])
    for t in (q, k, v, out):
        _check_rank(t, 4, "attention")
    _check_devices(tensors)
    _check_dtype(q, INPUT_DTYPES)
    for t in (k, v, out):
        _check_dtype(t, INPUT_DTYPES, like=q)
    (b, hq, sq, d), _ = attention_dims(q, layout)
    (kb, hkv, sk, kd), _ = attention_dims(k, layout)
    if kb != b:
        _fail(f"{k.name} has batch {kb} but {q.name} has {b}")
    if kd != d:
        _fail(f"{k.name} has head_dim {kd} but {q.name} has {d}")
    if hkv == 0 or hq % hkv != 0:
        _fail(f"{q.name} has {hq} heads and {k.name} {hkv}: the query heads must be a multiple "
              "of the key/value heads")
    _check_shape(v, k.shape, f"v must match k, layout {layout!r}")
    _check_shape(out, q.shape, "out must match q")
    strides = {}
    for t in (q, k, v, out):
        if t.strides[3] != 1:
            _fail(f"{t.name} has head_dim stride {t.strides[3]}: head_dim must be contiguous "
                  "(stride 1)")
        _, s = attention_dims(t, layout)
        for what, stride in zip(("batch", "row", "head"), s):
            if stride < 0 or stride % 8 != 0:
                _fail(f"{t.name} has {what} stride {stride}: strides must be >= 0 and multiples "
                      "of 8 elements")
        _check_aligned(t, 16, "the kernel loads 16-byte chunks")
        strides[t.name] = s
    if lse is not None:
        _check_dtype(lse, ("float32",))
        _check_shape(lse, (b, hq, sq), "lse is (B, Hq, Nq)")
        if lse.strides != (hq * sq, sq, 1):
            _fail(f"{lse.name} has strides {lse.strides}: it must be contiguous")
    if scale is not None and not (math.isfinite(scale) and scale >= 0):
        _fail(f"scale = {scale} must be finite and >= 0")
    return (b, hq, hkv, sq, sk, d), strides


def check_attention_varlen(q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, scale):
    """Checks a packed variable-length attention call (flash_attn_varlen_func's layout): q and out
    (total_q, Hq, d), k and v (total_k, Hkv, d), as check_attention checks them viewed as one
    batch entry of layout "bnhd"; cu_seqlens_q and cu_seqlens_k int32 vectors of one length
    (batch + 1) on q's device; the longest lengths >= 1 and at most the totals; lse (when given)
    float32 (Hq, total_q) contiguous. Their contents (offsets from 0 to the totals, each length
    at most the longest) are the caller's contract, as for flash_attn_varlen_func: reading them
    would synchronize. Returns ((batch, hq, hkv, total_q, total_k, d), strides)."""
    for t in (q, k, v, out):
        _check_rank(t, 3, "attention_varlen")
    as_4d = [TensorInfo(t.name, (1,) + t.shape, (0,) + t.strides, t.dtype, t.device, t.data_ptr)
             for t in (q, k, v, out)]
    (_, hq, hkv, total_q, total_k, d), strides = check_attention(*as_4d, None, "bnhd", scale)
    for cu in (cu_seqlens_q, cu_seqlens_k):
        _check_rank(cu, 1, "cu_seqlens")
        _check_dtype(cu, ("int32",))
        _check_devices([q, cu])
        if cu.strides != (1,):
            _fail(f"{cu.name} has stride {cu.strides[0]}: it must be contiguous")
    if cu_seqlens_q.shape != cu_seqlens_k.shape or cu_seqlens_q.shape[0] < 2:
        _fail(f"cu_seqlens_q has {cu_seqlens_q.shape[0]} offsets and cu_seqlens_k "
              f"{cu_seqlens_k.shape[0]}: both are batch + 1 (>= 2) long")
    batch = cu_seqlens_q.shape[0] - 1
    for name, longest, total in (("max_seqlen_q", max_seqlen_q, total_q),
                                 ("max_seqlen_k", max_seqlen_k, total_k)):
        if not 1 <= longest <= total:
            _fail(f"{name} = {longest} must be between 1 and the {total} packed rows")
    if lse is not None:
        _check_dtype(lse, ("float32",))
        _check_shape(lse, (hq, total_q), "lse is (Hq, total_q)")
        if lse.strides != (total_q, 1):
            _fail(f"{lse.name} has strides {lse.strides}: it must be contiguous")
    return (batch, hq, hkv, total_q, total_k, d), strides


def _check_dense(t):
    """Elements stored without gaps in row-major order (RMSNorm's rows are dense)."""
    expected, step = [], 1
    for size in reversed(t.shape):
        expected.insert(0, step)
        step *= size
    if any(size > 1 and s != e for size, s, e in zip(t.shape, t.strides, expected)):
        _fail(f"{t.name} has strides {t.strides} for shape {t.shape}: RMSNorm needs it contiguous "
              "(use .contiguous())")


def check_rmsnorm(x, weight, residual, out, eps):
    """Checks y = rmsnorm(x (+ residual)) * weight into out: one CUDA device, one dtype (bfloat16
    or float16); weight (hidden,) for x (..., hidden); residual and out shaped like x; all dense
    and 16-byte aligned (the kernel moves 16-byte vectors); eps finite and >= 0. Returns
    (rows, hidden)."""
    tensors = [t for t in (x, weight, residual, out) if t is not None]
    _check_devices(tensors)
    for t in tensors:
        _check_dtype(t, INPUT_DTYPES, like=x)
    if len(x.shape) < 1 or x.shape[-1] < 1:
        _fail(f"{x.name} has shape {x.shape}: RMSNorm normalizes a last dimension of >= 1 element")
    hidden = x.shape[-1]
    _check_shape(weight, (hidden,), f"{x.name}'s last dimension is {hidden}")
    for t in (residual, out):
        if t is not None:
            _check_shape(t, x.shape, f"shaped like {x.name}")
    for t in tensors:
        _check_dense(t)
        _check_aligned(t, 16, "the kernel moves 16-byte vectors")
    if not math.isfinite(eps) or eps < 0:
        _fail(f"eps = {eps} must be finite and >= 0")
    return math.prod(x.shape) // hidden, hidden


def optional_info(name, tensor) -> Optional[TensorInfo]:
    """describe(name, tensor), or None for None."""
    return describe(name, tensor) if tensor is not None else None
