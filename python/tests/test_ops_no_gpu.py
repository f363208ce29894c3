"""kerntune.ops without a GPU (the CI tier, CTest python.ops_no_gpu, with Debian's CPU-only
python3-torch): the fake implementations give each op's output shapes, dtypes and devices for
fake CUDA tensors under FakeTensorMode (through the registered ops where this PyTorch has
torch.library.custom_op, else called directly), wrong arguments raise the documented
KerntuneError naming the tensor, gemm hands strided operands to the kernel without copies where
it takes them, and the ops refuse CPU tensors before any launch. torch.library.opcheck runs the
ops for real, so it runs only with a CUDA device (python/tests/test_ops_gpu.py runs it there).
Exits 77 (CTest: skipped), saying why, without PyTorch."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

try:
    import torch
except ImportError as e:
    print(f"python ops: skipped: PyTorch cannot be imported by {sys.executable} ({e}); "
          "apt-get install python3-torch (scripts/install_deps.sh) for these checks")
    sys.exit(77)

from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode  # noqa: E402
from torch.utils._mode_utils import no_dispatch  # noqa: E402

import kerntune  # noqa: E402
import kerntune.ops as ops  # noqa: E402

PASSED = []
MODE = FakeTensorMode()


def test(function):
    PASSED.append(function)
    return function


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


def fake(shape, dtype=torch.bfloat16, device="cuda:0", strides=None):
    """A fake tensor on `device` (no such device needed): a meta tensor's shape and strides."""
    with no_dispatch():
        meta = torch.empty_strided(shape, strides or contiguous_strides(shape), dtype=dtype,
                                   device="meta")
    return FakeTensor(MODE, meta, torch.device(device))


# The fake implementation of each op by its name, as the registered op runs it and as called here
# on a PyTorch without custom_op.
FAKES = {
    "gemm": ops._gemm_fake,
    "attention": lambda q, k, v, causal, scale, layout:
        ops._attention_fake(q, k, v, causal, scale, layout, False),
    "attention_lse": lambda q, k, v, causal, scale, layout:
        ops._attention_fake(q, k, v, causal, scale, layout, True),
    "attention_backward": ops._attention_backward_fake,
    "rmsnorm": lambda x, weight, eps: ops._rmsnorm_fake(x, weight, None, eps),
    "add_rmsnorm": lambda x, residual, weight, eps: ops._rmsnorm_fake(x, weight, residual, eps),
}


def fake_call(name, *args):
    """kerntune::<name> on fake tensors under FakeTensorMode: the registered op where there is
    one, else its fake implementation."""
    with MODE:
        if ops.REGISTERED:
            return getattr(torch.ops.kerntune, name)(*args)
        return FAKES[name](*args)


def described(t):
    return tuple(t.shape), str(t.dtype).replace("torch.", ""), str(t.device)


def expect_error(call, *needles):
    try:
        call()
    except Exception as e:  # the op's KerntuneError, as the dispatcher passes it on
        error = e if isinstance(e, kerntune.KerntuneError) else e.__cause__
        assert isinstance(error, kerntune.KerntuneError), f"{type(e).__name__}: {e}"
        for needle in needles:
            assert needle in str(error), f"{needle!r} not in {error}"
        return
    raise AssertionError(f"no KerntuneError; expected one naming {needles}")


# ---- the fake implementations: shapes, dtypes, devices -----------------------------------------

@test
def gemm_fake_flattens_leading_dims_and_shapes_the_output_back():
    a, w = fake((2, 3, 64)), fake((128, 64))
    assert described(fake_call("gemm", a, w, "nt", "")) == ((2, 3, 128), "bfloat16", "cuda:0")
    assert described(fake_call("gemm", a, w, "nt", "float32"))[1] == "float32"
    assert described(fake_call("gemm", a, fake((64, 128)), "nn", ""))[0] == (2, 3, 128)
    assert described(fake_call("gemm", fake((64,)), w, "nt", ""))[0] == (128,)
    half = fake_call("gemm", fake((5, 64), torch.float16), fake((7, 64), torch.float16), "nt", "")
    assert described(half) == ((5, 7), "float16", "cuda:0")
    on_one = fake_call("gemm", fake((5, 64), device="cuda:1"), fake((7, 64), device="cuda:1"),
                       "nt", "")
    assert described(on_one)[2] == "cuda:1"


@test
def attention_fake_gives_o_like_q_and_the_logsumexp_per_query_row():
    q, k = fake((2, 8, 100, 64)), fake((2, 2, 300, 64))
    assert described(fake_call("attention", q, k, k, True, None, "bhnd")) == \
        ((2, 8, 100, 64), "bfloat16", "cuda:0")
    o, lse = fake_call("attention_lse", q, k, k, False, 0.125, "bhnd")
    assert described(o)[0] == (2, 8, 100, 64) and described(lse) == ((2, 8, 100), "float32",
                                                                       "cuda:0")
    # (B, N, H, d) views of one fused QKV projection: any strides with a contiguous head_dim.
    row = (8 + 2 + 2) * 64
    q = fake((2, 100, 8, 64), strides=(100 * row, row, 64, 1))
    k = fake((2, 100, 2, 64), strides=(100 * row, row, 64, 1))
    o, lse = fake_call("attention_lse", q, k, k, True, None, "bnhd")
    assert described(o)[0] == (2, 100, 8, 64) and o.is_contiguous(), described(o)
    assert described(lse)[0] == (2, 8, 100)


@test
def attention_backward_fake_gives_gradients_like_q_k_and_v():
    q, k, lse = fake((2, 8, 100, 64)), fake((2, 2, 300, 64)), fake((2, 8, 100), torch.float32)
    dq, dk, dv = fake_call("attention_backward", q, k, k, q, q, lse, True, None, "bhnd", False)
    assert described(dq) == ((2, 8, 100, 64), "bfloat16", "cuda:0")
    assert described(dk)[0] == (2, 2, 300, 64) and described(dv)[0] == (2, 2, 300, 64)
    expect_error(lambda: fake_call("attention_backward", q, fake((2, 3, 300, 64)),
                                   fake((2, 3, 300, 64)), q, q, lse, True, None, "bhnd", False),
                 "multiple")


@test
def rmsnorm_fake_gives_y_and_with_a_residual_the_sum_too():
    x, g = fake((4, 7, 4096)), fake((4096,))
    assert described(fake_call("rmsnorm", x, g, 1e-6)) == ((4, 7, 4096), "bfloat16", "cuda:0")
    y, total = fake_call("add_rmsnorm", x, fake((4, 7, 4096)), g, 1e-5)
    assert described(y) == described(total) == ((4, 7, 4096), "bfloat16", "cuda:0")
    assert y is not total


# ---- wrong arguments: the documented KerntuneError, naming the tensor --------------------------

@test
def gemm_refuses_wrong_arguments_naming_the_tensor():
    a = fake((4, 64))
    expect_error(lambda: fake_call("gemm", a, fake((128, 32)), "nt", ""), "b has shape",
                 "K = 64")
    expect_error(lambda: fake_call("gemm", a, fake((128, 64), torch.float16), "nt", ""),
                 "b is float16")
    expect_error(lambda: fake_call("gemm", fake((4, 64), device="cpu"), fake((8, 64), device="cpu"),
                                   "nt", ""), "is on cpu")
    expect_error(lambda: fake_call("gemm", a, fake((8, 64), device="cuda:1"), "nt", ""),
                 "b is on cuda:1")
    expect_error(lambda: fake_call("gemm", a, fake((8, 64)), "tn", ""), "'tn'")
    expect_error(lambda: fake_call("gemm", a, fake((8, 64)), "nt", "int8"), "out_dtype int8")
    expect_error(lambda: fake_call("gemm", a, fake((2, 8, 64)), "nt", ""), "2-D b")
    expect_error(lambda: fake_call("gemm", fake((2, 3, 64), torch.float32), fake((8, 64)), "nt",
                                   ""), "a (2, 3, 64) as (M, K) is float32")


@test
def attention_refuses_wrong_arguments_naming_the_tensor():
    q, k = fake((1, 8, 64, 128)), fake((1, 2, 64, 128))
    expect_error(lambda: fake_call("attention", q, fake((1, 2, 64, 32)), fake((1, 2, 64, 32)),
                                   False, None, "bhnd"), "k has head_dim 32")
    expect_error(lambda: fake_call("attention", fake((1, 6, 64, 128)), fake((1, 4, 64, 128)),
                                   fake((1, 4, 64, 128)), False, None, "bhnd"), "multiple")
    expect_error(lambda: fake_call("attention", q, k, k, False, None, "bshd"), "'bshd'")
    expect_error(lambda: fake_call("attention", q, k, k, False, float("nan"), "bhnd"), "scale")
    expect_error(lambda: fake_call("attention", fake((1, 8, 64, 128), torch.float32),
                                   fake((1, 2, 64, 128), torch.float32),
                                   fake((1, 2, 64, 128), torch.float32), False, None, "bhnd"),
                 "q is float32")
    transposed = fake((1, 8, 64, 128), strides=(8 * 64 * 128, 64 * 128, 1, 64))
    expect_error(lambda: fake_call("attention", transposed, k, k, False, None, "bhnd"),
                 "q has head_dim stride 64")
    expect_error(lambda: fake_call("attention_lse", q, fake((2, 2, 64, 128)),
                                   fake((2, 2, 64, 128)), False, None, "bhnd"), "k has batch 2")


@test
def rmsnorm_refuses_wrong_arguments_naming_the_tensor():
    x = fake((4, 4096))
    expect_error(lambda: fake_call("rmsnorm", x, fake((4095,)), 1e-6), "weight has shape")
    expect_error(lambda: fake_call("rmsnorm", x, fake((4096,)), -1.0), "eps = -1.0")
    expect_error(lambda: fake_call("add_rmsnorm", x, fake((4, 4096), torch.float16),
                                   fake((4096,)), 1e-6), "residual is float16")
    expect_error(lambda: fake_call("add_rmsnorm", x, fake((2, 4096)), fake((4096,)), 1e-6),
                 "residual has shape")
    expect_error(lambda: fake_call("rmsnorm", fake((4, 4096), device="cpu"),
                                   fake((4096,), device="cpu"), 1e-6), "x is on cpu")


@test
def the_ops_refuse_cpu_tensors_before_any_launch():
    a, w = torch.randn(4, 64, dtype=torch.bfloat16), torch.randn(8, 64, dtype=torch.bfloat16)
    q = torch.randn(1, 2, 16, 64, dtype=torch.bfloat16)
    x, g = torch.randn(4, 64, dtype=torch.bfloat16), torch.randn(64, dtype=torch.bfloat16)
    if ops.REGISTERED:
        expect_error(lambda: ops.gemm(a, w), "a is on cpu")
        expect_error(lambda: ops.attention(q, q, q), "q is on cpu")
        expect_error(lambda: ops.rmsnorm(x, g, residual=x), "x is on cpu")
    else:
        expect_error(lambda: ops.gemm(a, w), "PyTorch 2.4 or newer", torch.__version__)
        expect_error(lambda: ops._gemm_impl(a, w, "nt", ""), "a is on cpu")
        expect_error(lambda: ops._attention_impl(q, q, q, False, None, "bhnd", True),
                     "q is on cpu")
        expect_error(lambda: ops._rmsnorm_impl(x, g, x, 1e-6), "x is on cpu")


# ---- strided operands: what gemm copies and what it passes as it is ----------------------------

@test
def gemm_passes_dense_rows_and_transposed_weights_without_copies():
    a = torch.randn(2, 3, 64)
    w = torch.randn(128, 64)
    a2, b, layout, copied = ops.gemm_operands(a, w, "nt")
    assert (tuple(a2.shape), layout, copied) == ((6, 64), "nt", []), (a2.shape, layout, copied)
    assert a2.data_ptr() == a.data_ptr() and b.data_ptr() == w.data_ptr()
    w_kn = torch.randn(64, 128)  # stored (K, N): its transpose is an (N, K) "nt" weight
    a2, b, layout, copied = ops.gemm_operands(a, w_kn.t(), "nt")
    assert (layout, copied, b.data_ptr()) == ("nn", [], w_kn.data_ptr()), (layout, copied)
    assert tuple(b.shape) == (64, 128) and b.is_contiguous()
    a2, b, layout, copied = ops.gemm_operands(a, w.t(), "nn")
    assert (layout, copied, b.data_ptr()) == ("nt", [], w.data_ptr()), (layout, copied)
    block = torch.randn(4, 10, 64)[1]  # a view into a larger tensor whose rows stay dense
    a2, _, _, copied = ops.gemm_operands(block, w, "nt")
    assert copied == [] and a2.data_ptr() == block.data_ptr()


@test
def gemm_copies_operands_the_kernel_cannot_take():
    w = torch.randn(128, 64)
    columns = torch.randn(10, 128)[:, :64]  # rows 128 apart: the kernel takes lda = K only
    a2, _, _, copied = ops.gemm_operands(columns, w, "nt")
    assert copied == ["a"] and a2.is_contiguous() and torch.equal(a2, columns)
    swapped = torch.randn(3, 2, 64).transpose(0, 1)  # leading dims that do not merge into a view
    a2, _, _, copied = ops.gemm_operands(swapped, w, "nt")
    assert copied == ["a"] and torch.equal(a2, swapped.reshape(-1, 64))
    every_other = torch.randn(128, 128)[:, ::2]
    _, b, layout, copied = ops.gemm_operands(torch.randn(4, 64), every_other, "nt")
    assert (copied, layout) == (["b"], "nt") and torch.equal(b, every_other)


@test
def opcheck_runs_where_there_is_a_cuda_device():
    if not hasattr(torch.library, "opcheck") or not torch.cuda.is_available():
        print(f"  opcheck: not here (PyTorch {torch.__version__}, "
              f"{'with' if hasattr(torch.library, 'opcheck') else 'without'} "
              "torch.library.opcheck, no CUDA device): it runs each op for real; "
              "python/tests/test_ops_gpu.py runs it on the GPU machine")
        return
    a = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.kerntune.gemm.default, (a, w, "nt", ""))


# ---- the runtime's options ----------------------------------------------------------------------

@test
def runtime_refuses_a_benchmark_count_out_of_range_before_touching_cuda():
    for bad in (65, -1, 2.5, "8"):
        try:
            kerntune.Runtime(benchmark=bad)
        except ValueError as e:
            assert f"benchmark={bad!r}" in str(e) and "1 to 64" in str(e), str(e)
            continue
        raise AssertionError(f"Runtime(benchmark={bad!r}) was accepted")


def main():
    how = "registered" if ops.REGISTERED else \
        "not registered (no torch.library.custom_op): the fake implementations called directly"
    print(f"python ops: PyTorch {torch.__version__} from {torch.__file__}; ops {how}")
    failed = 0
    for function in PASSED:
        try:
            function()
            print(f"  ok: {function.__name__}")
        except Exception as e:  # report every check, then fail
            failed += 1
            print(f"  FAILED: {function.__name__}: {type(e).__name__}: {e}")
    print(f"python ops: {len(PASSED) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
