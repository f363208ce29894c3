"""The harness of the GPU tier's plain-script tests (test_*_gpu.py): they skip, exit 77 (CTest's
SKIP_RETURN_CODE), saying why, without PyTorch, a CUDA device or torch.library.custom_op; each
check runs at once and is reported ok or FAILED with its reason; the script ends with
'NAME: N passed, N failed' and exits 1 when any failed. Also the comparisons they share: the
relative error with a floor for gradients that are zero in exact arithmetic, and an attention
reference in float32 (float64 for float64 inputs) that autograd differentiates."""
import math
import os
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

try:
    import torch
except ImportError as e:
    torch = None
    _TORCH_ERROR = e

_RESULTS = []


def require_gpu_and_custom_ops(script):
    """(torch, kerntune.ops) where this PyTorch has a CUDA device and torch.library.custom_op;
    else prints why and exits 77."""
    if torch is None:
        print(f"{script}: skipped: PyTorch cannot be imported ({_TORCH_ERROR})")
        sys.exit(77)
    if not torch.cuda.is_available():
        print(f"{script}: skipped: no CUDA device (PyTorch {torch.__version__})")
        sys.exit(77)
    import kerntune.ops as kt
    if not kt.REGISTERED:
        print(f"{script}: skipped: PyTorch {torch.__version__} has no torch.library.custom_op")
        sys.exit(77)
    return torch, kt


def start(script, seed=None):
    """Seeds torch (a fresh seed unless given), points kerntune.ops at a new database in a
    temporary folder, prints the versions, device, library, database and seed; returns the
    seed."""
    import kerntune
    import kerntune.ops as kt
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    database = os.path.join(tempfile.mkdtemp(prefix=f"kt_{script}_"), "kerntune.db")
    kt.use_database(database)
    print(f"{script}: PyTorch {torch.__version__}, {torch.cuda.get_device_name()}, kerntune "
          f"{kerntune.version()} ({kerntune.library()._name}), database {database}, seed {seed}")
    return seed


def check(name):
    """Runs the decorated check now, recording ok or FAILED with the reason; what it returns is
    printed after ok."""
    def run(function):
        try:
            detail = function()
            _RESULTS.append((name, None))
            print(f"ok      {name}{': ' + detail if detail else ''}", flush=True)
        except Exception as e:  # every check is reported; the exit status sums them up
            _RESULTS.append((name, e))
            print(f"FAILED  {name}: {type(e).__name__}: {e}", flush=True)
            traceback.print_exc(limit=3)
        return function
    return run


def finish(script):
    """Prints 'SCRIPT: N passed, N failed' and exits 1 when a check failed, else 0."""
    failed = [name for name, error in _RESULTS if error is not None]
    print(f"{script}: {len(_RESULTS) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


def relative_error(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-12)).item()


def expect_close(got, want, tolerance, what):
    assert got.shape == want.shape, \
        f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    error = relative_error(got, want)
    assert error < tolerance, f"{what}: relative error {error:.3g} >= {tolerance}"
    return f"{what} {error:.2g}"


def gradient_error(got, want):
    """||got - want|| / ||want||; where want is zero (every query sees one key, so dQ and dK are
    zero in exact arithmetic) the RMS of got instead, on the scale of the gradients of
    unit-variance inputs and dO."""
    got, want = got.double(), want.double()
    if want.norm().item() <= 1e-9 * math.sqrt(want.numel()):
        return (got.norm() / math.sqrt(max(got.numel(), 1))).item()
    return ((got - want).norm() / want.norm()).item()


def attention_reference(q, k, v, causal, layout="bhnd", scale=None):
    """Attention in float32 (float64 for float64 inputs), differentiable: O in `layout` and q's
    dtype, and the (B, Hq, Nq) logsumexp. K and V repeated for GQA; causal bottom-right aligned
    as kerntune's (query i sees keys j <= i + Nk - Nq); a row that sees no key has O = 0,
    lse = -inf and zero gradients."""
    if layout == "bnhd":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    compute = torch.float64 if q.dtype == torch.float64 else torch.float32
    groups = q.shape[1] // k.shape[1]
    qf, kf, vf = q.to(compute), k.to(compute).repeat_interleave(groups, 1), \
        v.to(compute).repeat_interleave(groups, 1)
    s = qf @ kf.transpose(-1, -2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    sq, sk = q.shape[2], k.shape[2]
    visible = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    if causal:
        visible = visible.tril(sk - sq)
    s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s, -1)
    # Rows without a visible key: softmax over zeros (finite), then every weight masked to 0.
    p = torch.softmax(s.masked_fill(~visible.any(-1, keepdim=True), 0.0), -1) * visible
    o = (p @ vf).to(q.dtype)
    return (o.transpose(1, 2) if layout == "bnhd" else o), lse
