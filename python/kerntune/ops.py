"""kerntune's ops as PyTorch custom operators (namespace "kerntune", torch.library.custom_op:
PyTorch 2.4 or newer), each with a fake implementation giving its outputs' shapes, dtypes and
devices, so that torch.compile traces a model that calls them into one graph. They run on the
inputs' CUDA device and PyTorch's current stream there, through one kerntune.Runtime per device
(use_database() picks the database). attention() is differentiable (its backward is op
kerntune::attention_backward, from the forward's saved output and logsumexp); gemm and rmsnorm
are forward only.

    import kerntune.ops as kt
    y = kt.gemm(x, w)                            # x (..., K), w (N, K): x @ w.T, (..., N)
    o = kt.attention(q, k, v, causal=True)       # (B, H, N, d); layout="bnhd": (B, N, H, d)
    h = kt.rmsnorm(x, g, eps=1e-6)               # h, s = kt.rmsnorm(x, g, residual=r): s = x + r

Errors: a KerntuneError (a RuntimeError) naming the tensor and the rule (checks.py) for a wrong
device, dtype, shape, stride or layout, raised by the fake implementation while tracing and by
the op before any launch; a KerntuneError at the call on a PyTorch without custom_op.
"""
import math
import threading
from typing import Optional, Tuple

from . import checks
from ._ffi import KT_DTYPES, KerntuneError
from .runtime import Runtime, _torch, cuda_index

torch = _torch("kerntune.ops")  # a KerntuneError saying how to get PyTorch when it is missing

# ---- the runtimes ------------------------------------------------------------------------------

_lock = threading.Lock()
_runtimes = {}  # CUDA device index -> Runtime
_database = {"path": None, "read_only": False, "record": None}


def use_database(database=None, read_only=False, record=None):
    """The tuning database the ops dispatch from, as kerntune.Runtime takes it (None: $KERNTUNE_DB
    or the user cache database), and record mode's manifest (None: $KERNTUNE_RECORD). Closes the
    runtimes opened so far; call it before the first op, not while another thread runs one."""
    with _lock:
        for opened in _runtimes.values():
            opened.close()
        _runtimes.clear()
        _database.update(path=database, read_only=read_only, record=record)


def runtime(device=None):
    """The Runtime the ops use on a CUDA device (an index, a torch.device, None: the current one),
    opened on first use."""
    index = cuda_index(device)
    with _lock:
        opened = _runtimes.get(index)
        if opened is None:
            opened = _runtimes[index] = Runtime(_database["path"], _database["read_only"],
                                                device=index, record=_database["record"])
    return opened


# ---- arguments, shared by the fake implementations and the ops ---------------------------------

def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _info(name, shape, like, dtype=None):
    """A TensorInfo of a dense tensor of `shape` on `like`'s device: what an op hands the kernel
    after its copies (checks.py checks it; address 0 passes the alignment checks)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return checks.TensorInfo(name, tuple(shape), tuple(strides),
                             dtype or _dtype_name(like.dtype), str(like.device), 0)


def _as_is(name, t):
    """The TensorInfo of `t` with its own strides (attention passes strides to the kernel)."""
    return checks.TensorInfo(name, tuple(t.shape), tuple(t.stride()), _dtype_name(t.dtype),
                             str(t.device), 0)


def _gemm_output(a, b, layout, out_dtype):
    """Checks gemm's arguments as the kernel will get them (a's leading dims flattened; a and b
    made row-major) and returns the output's (shape, dtype name)."""
    checks.check_gemm_layout(layout)
    if out_dtype and out_dtype not in KT_DTYPES:
        raise KerntuneError(checks.KT_ERROR_INVALID_ARGUMENT,
                            f"out_dtype {out_dtype} is not one of {', '.join(KT_DTYPES)}")
    if a.dim() < 1 or b.dim() != 2:
        raise KerntuneError(checks.KT_ERROR_INVALID_ARGUMENT,
                            f"a has shape {tuple(a.shape)} and b {tuple(b.shape)}: gemm takes a "
                            "(..., K) and a 2-D b")
    k = a.shape[-1]
    m = math.prod(a.shape[:-1])
    n = b.shape[0] if layout == "nt" else b.shape[1]
    out_dtype = out_dtype or _dtype_name(a.dtype)
    a_name = "a" if a.dim() == 2 else f"a {tuple(a.shape)} as (M, K)"
    checks.check_gemm(_info(a_name, (m, k), a), _info("b", tuple(b.shape), b),
                      _info("out", (m, n), a, out_dtype), layout)
    return (*a.shape[:-1], n), out_dtype


def _attention_output(q, k, v, causal, scale, layout, with_lse):
    """Checks attention's arguments (their own strides: the kernel takes them) and returns the
    output's shape and, with_lse, the logsumexp's (B, Hq, Nq)."""
    lse_shape = None
    if with_lse and q.dim() == 4 and layout in checks.ATTENTION_LAYOUTS:
        b, hq, sq = (q.shape[0], q.shape[1], q.shape[2]) if layout == "bhnd" else \
            (q.shape[0], q.shape[2], q.shape[1])
        lse_shape = (b, hq, sq)
    checks.check_attention(_as_is("q", q), _as_is("k", k), _as_is("v", v),
                           _info("out", tuple(q.shape), q),
                           _info("lse", lse_shape, q, "float32") if lse_shape else None,
                           layout, scale)
    return tuple(q.shape), lse_shape


def _rmsnorm_check(x, weight, residual, eps):
    """Checks rmsnorm's arguments as the kernel will get them (made dense)."""
    residual_info = _info("residual", tuple(residual.shape), residual) \
        if residual is not None else None
    checks.check_rmsnorm(_info("x", tuple(x.shape), x),
                         _info("weight", tuple(weight.shape), weight), residual_info, None, eps)


def _new(like, shape, dtype_name=None):
    # NOTE: aten.new_empty, not Tensor.new_empty: the Python binding initializes CUDA for a CUDA
    # device, which a CPU-only PyTorch (the CPU tier's fake tensors) cannot; the dispatcher call
    # does not, and it is the same allocation on a GPU.
    dtype = getattr(torch, dtype_name) if dtype_name else like.dtype
    return torch.ops.aten.new_empty.default(like, list(shape), dtype=dtype)


# ---- what the kernels get ----------------------------------------------------------------------

def _row_major(t):
    rows, cols = t.shape
    return (cols <= 1 or t.stride(1) == 1) and (rows <= 1 or t.stride(0) == cols)


def gemm_operands(a, b, layout):
    """What gemm hands the kernel, which takes dense row-major operands: (a as (M, K), b, layout,
    the names of the operands copied). a's leading dims are flattened by a view where its rows
    are dense (else copied); b is passed as it is when row-major, and a transposed b (e.g.
    w.t() of a row-major w) as its transpose with the other layout, both without a copy; any other
    b is copied."""
    copied = []
    a2 = a.reshape(-1, a.shape[-1])  # a view where the leading dims merge, else a copy
    if not _row_major(a2):
        a2 = a2.contiguous()
    if a2.numel() > 0 and a2.data_ptr() != a.data_ptr():
        copied.append("a")
    if not _row_major(b):
        if _row_major(b.t()):
            b, layout = b.t(), ("nn" if layout == "nt" else "nt")
        else:
            b = b.contiguous()
            copied.append("b")
    return a2, b, layout, copied


def _dense(t):
    return t if t is None or t.is_contiguous() else t.contiguous()


# ---- the custom ops ----------------------------------------------------------------------------

def _gemm_fake(a, b, layout, out_dtype):
    shape, dtype = _gemm_output(a, b, layout, out_dtype)
    return _new(a, shape, dtype)


def _gemm_impl(a, b, layout, out_dtype):
    shape, dtype = _gemm_output(a, b, layout, out_dtype)
    out = _new(a, shape, dtype)
    if out.numel() == 0:
        return out
    if a.shape[-1] == 0:
        return out.zero_()
    a2, b2, layout2, _ = gemm_operands(a, b, layout)
    with torch.cuda.device(a.device):
        runtime(a.device).gemm(a2, b2, layout=layout2, out=out.view(-1, shape[-1]))
    return out


def _attention_fake(q, k, v, causal, scale, layout, with_lse):
    o_shape, lse_shape = _attention_output(q, k, v, causal, scale, layout, with_lse)
    o = _new(q, o_shape)
    return (o, _new(q, lse_shape, "float32")) if with_lse else o


def _attention_impl(q, k, v, causal, scale, layout, with_lse):
    o_shape, lse_shape = _attention_output(q, k, v, causal, scale, layout, with_lse)
    o = _new(q, o_shape)
    if o.numel() == 0:
        return (o, _new(q, lse_shape, "float32")) if with_lse else o
    with torch.cuda.device(q.device):
        return runtime(q.device).attention(q, k, v, causal=causal, scale=scale, layout=layout,
                                           return_lse=with_lse, out=o)


def _attention_backward_impl(q, k, v, o, dout, lse, causal, scale, layout, deterministic):
    with torch.cuda.device(q.device):
        return runtime(q.device).attention_backward(q, k, v, o, dout.contiguous(), lse,
                                                    causal=causal, scale=scale, layout=layout,
                                                    deterministic=deterministic)


def _attention_backward_fake(q, k, v, o, dout, lse, causal, scale, layout, deterministic):
    _attention_output(q, k, v, causal, scale, layout, True)
    return _new(q, tuple(q.shape)), _new(k, tuple(k.shape)), _new(v, tuple(v.shape))


def _rmsnorm_fake(x, weight, residual, eps):
    _rmsnorm_check(x, weight, residual, eps)
    y = _new(x, tuple(x.shape))
    return (y, _new(x, tuple(x.shape))) if residual is not None else y


def _rmsnorm_impl(x, weight, residual, eps):
    _rmsnorm_check(x, weight, residual, eps)
    y = _new(x, tuple(x.shape))
    total = _new(x, tuple(x.shape)) if residual is not None else None
    if y.numel() > 0:
        with torch.cuda.device(x.device):
            runtime(x.device).rmsnorm(_dense(x), _dense(weight), eps=eps,
                                      residual=_dense(residual), out=y, residual_out=total)
    return (y, total) if residual is not None else y


_custom_op = getattr(torch.library, "custom_op", None)
REGISTERED = _custom_op is not None  # False on PyTorch before 2.4: the ops raise when called

if REGISTERED:
    Tensor = torch.Tensor

    @_custom_op("kerntune::gemm", mutates_args=())
    def _gemm_op(a: Tensor, b: Tensor, layout: str, out_dtype: str) -> Tensor:
        return _gemm_impl(a, b, layout, out_dtype)

    @_custom_op("kerntune::attention", mutates_args=())
    def _attention_op(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: Optional[float],
                      layout: str) -> Tensor:
        return _attention_impl(q, k, v, causal, scale, layout, False)

    @_custom_op("kerntune::attention_lse", mutates_args=())
    def _attention_lse_op(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: Optional[float],
                          layout: str) -> Tuple[Tensor, Tensor]:
        return _attention_impl(q, k, v, causal, scale, layout, True)

    @_custom_op("kerntune::attention_backward", mutates_args=())
    def _attention_backward_op(q: Tensor, k: Tensor, v: Tensor, o: Tensor, dout: Tensor,
                               lse: Tensor, causal: bool, scale: Optional[float], layout: str,
                               deterministic: bool) -> Tuple[Tensor, Tensor, Tensor]:
        return _attention_backward_impl(q, k, v, o, dout, lse, causal, scale, layout,
                                        deterministic)

    @_custom_op("kerntune::rmsnorm", mutates_args=())
    def _rmsnorm_op(x: Tensor, weight: Tensor, eps: float) -> Tensor:
        return _rmsnorm_impl(x, weight, None, eps)

    @_custom_op("kerntune::add_rmsnorm", mutates_args=())
    def _add_rmsnorm_op(x: Tensor, residual: Tensor, weight: Tensor,
                        eps: float) -> Tuple[Tensor, Tensor]:
        return _rmsnorm_impl(x, weight, residual, eps)

    @_gemm_op.register_fake
    def _(a, b, layout, out_dtype):
        return _gemm_fake(a, b, layout, out_dtype)

    @_attention_op.register_fake
    def _(q, k, v, causal, scale, layout):
        return _attention_fake(q, k, v, causal, scale, layout, False)

    @_attention_lse_op.register_fake
    def _(q, k, v, causal, scale, layout):
        return _attention_fake(q, k, v, causal, scale, layout, True)

    @_attention_backward_op.register_fake
    def _(q, k, v, o, dout, lse, causal, scale, layout, deterministic):
        return _attention_backward_fake(q, k, v, o, dout, lse, causal, scale, layout,
                                        deterministic)

    # attention's gradient: the backward op from the saved inputs, output and logsumexp (the
    # logsumexp's own gradient is not propagated: it is an output for the backward, not a loss).
    def _attention_setup_context(ctx, inputs, output):
        q, k, v, causal, scale, layout = inputs
        o, lse = output
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.attrs = (causal, scale, layout)

    def _attention_backward(ctx, grad_o, grad_lse):
        q, k, v, o, lse = ctx.saved_tensors
        causal, scale, layout = ctx.attrs
        dq, dk, dv = _attention_backward_op(q, k, v, o, grad_o, lse, causal, scale, layout,
                                            _deterministic["on"])
        return dq, dk, dv, None, None, None

    _attention_lse_op.register_autograd(_attention_backward, setup_context=_attention_setup_context)

    @_rmsnorm_op.register_fake
    def _(x, weight, eps):
        return _rmsnorm_fake(x, weight, None, eps)

    @_add_rmsnorm_op.register_fake
    def _(x, residual, weight, eps):
        return _rmsnorm_fake(x, weight, residual, eps)


def _require_registered():
    if not REGISTERED:
        raise KerntuneError(6, "kerntune.ops needs torch.library.custom_op (PyTorch 2.4 or "
                               f"newer); this is PyTorch {torch.__version__}. kerntune.Runtime "
                               "works with it (no torch.compile support)")


# ---- the ops -----------------------------------------------------------------------------------

def gemm(a, b, layout="nt", out_dtype=None):
    """a @ b.T (layout "nt": b is (N, K), a linear layer's weight) or a @ b ("nn": b is (K, N)),
    as op kerntune::gemm. a is (..., K) (its leading dims flattened into M, the output shaped
    (..., N) back); a and b bfloat16 or float16 alike; out_dtype bfloat16, float16 or float32
    (default: a's). Copies (gemm_operands): none for a whose rows are dense (any contiguous a,
    and views that keep its rows dense) nor for b row-major or transposed (w.t()); a otherwise,
    and b of any other strides, are copied, as the kernel takes dense row-major operands."""
    _require_registered()
    return _gemm_op(a, b, layout, _dtype_name(out_dtype) if out_dtype is not None else "")


_deterministic = {"on": False}


def use_deterministic_backward(on=True):
    """attention's backward sums dq in a fixed order from now on (bitwise reproducible, somewhat
    slower), as torch.use_deterministic_algorithms asks of PyTorch's own kernels."""
    _deterministic["on"] = bool(on)


def attention(q, k, v, causal=False, scale=None, layout="bhnd", return_lse=False):
    """softmax(scale * q @ k.T [causal, bottom-right aligned]) @ v, as op kerntune::attention
    (kerntune::attention_lse with return_lse). layout "bhnd": (B, H, N, d) like SDPA, "bnhd":
    (B, N, H, d) like FlashAttention; k and v may have fewer heads (GQA/MQA); bfloat16 or float16;
    head_dim 64, 96, 128 or 256. Any strides with a contiguous head_dim that are multiples of 8
    pass without a copy (e.g. q, k, v as views of one fused projection). Returns O (contiguous,
    q's shape), and with return_lse the (B, Hq, Nq) float32 logsumexp too. Differentiable in q, k
    and v (every head_dim): the backward is kerntune::attention_backward, deterministic after
    use_deterministic_backward()."""
    _require_registered()
    scale = None if scale is None else float(scale)
    if return_lse:
        return _attention_lse_op(q, k, v, bool(causal), scale, layout)
    if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        return _attention_lse_op(q, k, v, bool(causal), scale, layout)[0]  # saves the lse
    return _attention_op(q, k, v, bool(causal), scale, layout)


def rmsnorm(x, weight, eps=1e-6, residual=None):
    """x * rsqrt(mean(x**2, -1) + eps) * weight over the last dimension, as op kerntune::rmsnorm.
    With residual: the sum s = x + residual is normalized and returned too, (y, s), as op
    kerntune::add_rmsnorm (a new tensor: nothing is written in place, unlike
    Runtime.rmsnorm). bfloat16 or float16; weight (hidden,). x, weight and residual not
    contiguous are copied (the kernel reads dense rows)."""
    _require_registered()
    if residual is None:
        return _rmsnorm_op(x, weight, float(eps))
    return _add_rmsnorm_op(x, residual, weight, float(eps))


__all__ = ["gemm", "attention", "rmsnorm", "gemm_operands", "runtime", "use_database",
           "REGISTERED"]
