"""The Python package refuses wrong tensors before any launch, without torch or a GPU (the CI
tier, CTest python.checks_no_torch): every mismatch of issue 35 is a KerntuneError naming the
tensor, through checks.py and through Runtime with a recording stand-in for torch and the
library; a missing torch and a wrong KERNTUNE_LIB are KerntuneErrors too."""
import os
import subprocess
import sys
import types
from contextlib import contextmanager

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import kerntune  # noqa: E402
from kerntune import checks  # noqa: E402
from kerntune import runtime as runtime_module  # noqa: E402

PASSED = []


def test(function):
    PASSED.append(function)
    return function


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def info(name, shape, dtype="bfloat16", device="cuda:0", strides=None, data_ptr=1 << 20):
    return checks.TensorInfo(name, tuple(shape), strides or contiguous_strides(shape), dtype,
                             device, data_ptr)


@contextmanager
def torch_module(module):
    """sys.modules["torch"] is `module` inside the block (None: importing torch fails)."""
    saved = sys.modules.get("torch")
    sys.modules["torch"] = module
    try:
        yield
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved


def expect_error(call, *needles):
    try:
        call()
    except kerntune.KerntuneError as e:
        for needle in needles:
            assert needle in str(e), f"{needle!r} not in {e}"
        return str(e)
    raise AssertionError(f"no KerntuneError; expected one naming {needles}")


# ---- GEMM ---------------------------------------------------------------------------------------

@test
def gemm_good_call_returns_its_sizes():
    a, b, out = info("a", (256, 128)), info("b", (512, 128)), info("out", (256, 512))
    assert checks.check_gemm(a, b, out, "nt") == (256, 512, 128)
    assert checks.check_gemm(a, info("b", (128, 512)), out, "nn") == (256, 512, 128)


@test
def gemm_out_of_the_wrong_shape_is_refused():
    a, b = info("a", (256, 256)), info("b", (256, 256))
    expect_error(lambda: checks.check_gemm(a, b, info("out", (1, 1)), "nt"), "out", "(256, 256)")


@test
def gemm_inner_dimensions_must_agree():
    expect_error(lambda: checks.check_gemm(info("a", (64, 128)), info("b", (64, 64)),
                                           info("out", (64, 64)), "nt"), "b", "K = 128")


@test
def gemm_mixed_dtypes_are_refused():
    expect_error(lambda: checks.check_gemm(info("a", (64, 64)), info("b", (64, 64), "float16"),
                                           info("out", (64, 64)), "nt"), "b is float16", "bfloat16")
    expect_error(lambda: checks.check_gemm(info("a", (64, 64), "float32"), info("b", (64, 64)),
                                           info("out", (64, 64)), "nt"), "a is float32")


@test
def gemm_out_on_the_cpu_is_refused():
    expect_error(lambda: checks.check_gemm(info("a", (64, 64)), info("b", (64, 64)),
                                           info("out", (64, 64), device="cpu"), "nt"),
                 "out is on cpu")
    expect_error(lambda: checks.check_gemm(info("a", (64, 64)), info("b", (64, 64)),
                                           info("out", (64, 64), device="cuda:1"), "nt"),
                 "out is on cuda:1", "a is on cuda:0")


@test
def gemm_transposed_out_is_refused():
    expect_error(lambda: checks.check_gemm(info("a", (64, 32)), info("b", (64, 32)),
                                           info("out", (64, 64), strides=(1, 64)), "nt"),
                 "out has strides (1, 64)", "row-major")


@test
def gemm_unknown_layout_is_refused():
    expect_error(lambda: checks.check_gemm(info("a", (64, 64)), info("b", (64, 64)),
                                           info("out", (64, 64)), "xx"), "'xx'")


@test
def gemm_misaligned_operand_is_refused():
    expect_error(lambda: checks.check_gemm(info("a", (64, 64), data_ptr=(1 << 20) + 2),
                                           info("b", (64, 64)), info("out", (64, 64)), "nt"),
                 "a at", "16-byte aligned")
    # nn: B's rows are N long. N % 8 == 0 needs 16 bytes; even N its rows' 8 or 4; odd N 2.
    a, out = info("a", (64, 64)), info("out", (64, 334))
    expect_error(lambda: checks.check_gemm(a, info("b", (64, 334), data_ptr=(1 << 20) + 2), out,
                                           "nn"), "b at", "4-byte aligned", "N = 334")
    expect_error(lambda: checks.check_gemm(a, info("b", (64, 124), data_ptr=(1 << 20) + 4),
                                           info("out", (64, 124)), "nn"), "8-byte aligned")
    expect_error(lambda: checks.check_gemm(a, info("b", (64, 128), data_ptr=(1 << 20) + 8),
                                           info("out", (64, 128)), "nn"), "16-byte aligned")
    assert checks.check_gemm(a, info("b", (64, 334), data_ptr=(1 << 20) + 4), out,
                             "nn") == (64, 334, 64)
    assert checks.check_gemm(a, info("b", (64, 333), data_ptr=(1 << 20) + 2),
                             info("out", (64, 333)), "nn") == (64, 333, 64)


# ---- attention ----------------------------------------------------------------------------------

def qkvo(b=2, hq=8, hkv=2, sq=256, sk=256, d=128, **overrides):
    tensors = {"q": info("q", (b, hq, sq, d)), "k": info("k", (b, hkv, sk, d)),
               "v": info("v", (b, hkv, sk, d)), "out": info("out", (b, hq, sq, d))}
    tensors.update({name: shape if isinstance(shape, checks.TensorInfo) else info(name, shape)
                    for name, shape in overrides.items()})
    return tensors


def attention(t, lse=None, layout="bhnd", scale=None):
    return checks.check_attention(t["q"], t["k"], t["v"], t["out"], lse, layout, scale)


@test
def attention_good_call_returns_its_sizes_and_strides():
    dims, strides = attention(qkvo())
    assert dims == (2, 8, 2, 256, 256, 128), dims
    assert strides["q"] == (8 * 256 * 128, 128, 256 * 128), strides
    t = {name: info(name, (2, 256, h, 128)) for name, h in
         (("q", 8), ("k", 2), ("v", 2), ("out", 8))}
    dims, strides = attention(t, layout="bnhd")
    assert dims == (2, 8, 2, 256, 256, 128) and strides["q"] == (256 * 8 * 128, 8 * 128, 128)


@test
def attention_v_with_other_keys_than_k_is_refused():
    expect_error(lambda: attention(qkvo(v=(2, 2, 16, 128))), "v has shape", "(2, 2, 256, 128)")


@test
def attention_head_dim_mismatch_is_refused():
    expect_error(lambda: attention(qkvo(k=(2, 2, 256, 64), v=(2, 2, 256, 64))),
                 "k has head_dim 64", "q has 128")


@test
def attention_mixed_dtypes_are_refused():
    expect_error(lambda: attention(qkvo(v=info("v", (2, 2, 256, 128), "float16"))),
                 "v is float16", "q is bfloat16")


@test
def attention_out_on_the_cpu_or_transposed_is_refused():
    expect_error(lambda: attention(qkvo(out=info("out", (2, 8, 256, 128), device="cpu"))),
                 "out is on cpu")
    transposed = info("out", (2, 8, 256, 128), strides=(8 * 256 * 128, 256 * 128, 1, 256))
    expect_error(lambda: attention(qkvo(out=transposed)), "out has head_dim stride 256")


def varlen(total_q=300, total_k=300, hq=8, hkv=2, d=128, batch=3, max_q=200, max_k=200, **over):
    t = {"q": info("q", (total_q, hq, d)), "k": info("k", (total_k, hkv, d)),
         "v": info("v", (total_k, hkv, d)), "out": info("out", (total_q, hq, d)),
         "cu_q": info("cu_seqlens_q", (batch + 1,), "int32"),
         "cu_k": info("cu_seqlens_k", (batch + 1,), "int32"), "lse": None}
    t.update({name: value if value is None or isinstance(value, checks.TensorInfo)
              else info(name, value) for name, value in over.items()})
    return checks.check_attention_varlen(t["q"], t["k"], t["v"], t["out"], t["lse"], t["cu_q"],
                                         t["cu_k"], max_q, max_k, None)


@test
def attention_varlen_good_call_returns_its_sizes_and_packed_strides():
    dims, strides = varlen()
    assert dims == (3, 8, 2, 300, 300, 128), dims
    assert strides["q"] == (0, 8 * 128, 128) and strides["k"] == (0, 2 * 128, 128), strides
    dims, _ = varlen(lse=info("lse", (8, 300), "float32"))
    assert dims[3] == 300


@test
def attention_varlen_bad_offsets_lengths_and_lse_are_refused():
    expect_error(lambda: varlen(cu_q=info("cu_seqlens_q", (4,), "int64")), "cu_seqlens_q is int64")
    expect_error(lambda: varlen(cu_k=info("cu_seqlens_k", (3,), "int32")), "batch + 1")
    expect_error(lambda: varlen(max_q=301), "max_seqlen_q = 301", "300 packed rows")
    expect_error(lambda: varlen(max_k=0), "max_seqlen_k = 0")
    expect_error(lambda: varlen(q=(1, 300, 8, 128)), "q has shape", "3-D")
    expect_error(lambda: varlen(lse=info("lse", (300, 8), "float32")), "lse is (Hq, total_q)")
    expect_error(lambda: varlen(cu_q=info("cu_seqlens_q", (4,), "int32", device="cpu")),
                 "cu_seqlens_q is on cpu")


@test
def attention_unknown_layout_and_head_counts_are_refused():
    expect_error(lambda: attention(qkvo(), layout="xx"), "'xx'")
    expect_error(lambda: attention(qkvo(hkv=3)), "multiple")
    expect_error(lambda: attention(qkvo(), scale=float("nan")), "scale")


@test
def attention_lse_must_be_float32_of_q_rows():
    expect_error(lambda: attention(qkvo(), lse=info("lse", (2, 8, 256), "bfloat16")), "lse is")
    expect_error(lambda: attention(qkvo(), lse=info("lse", (2, 8, 128), "float32")), "lse has shape")
    attention(qkvo(), lse=info("lse", (2, 8, 256), "float32"))


# ---- Runtime with a recording stand-in for torch and the library -------------------------------

class FakeDType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class FakeTensor:
    """What Runtime reads of a torch tensor, and nothing on a device."""

    def __init__(self, shape, dtype="bfloat16", device="cuda:0", strides=None):
        self.shape, self._strides = tuple(shape), strides or contiguous_strides(shape)
        self.dtype, self.device = FakeDType(dtype), device

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def dim(self):
        return len(self.shape)

    def data_ptr(self):
        return 1 << 20

    def contiguous(self):
        return self


class RecordingLibrary:
    def __init__(self):
        self.launches = []

    def kt_gemm(self, *args):
        self.launches.append(("gemm", args))
        return 0

    def kt_attention_forward(self, *args):
        self.launches.append(("attention", args))
        return 0


def fake_torch():
    torch = types.ModuleType("torch")
    torch.float32 = FakeDType("float32")
    torch.empty = lambda *shape, device=None, dtype=None: FakeTensor(
        shape, str(dtype).replace("torch.", ""), device)
    torch.empty_like = lambda t: FakeTensor(t.shape, t.dtype.name, t.device)
    stream = types.SimpleNamespace(cuda_stream=0)
    torch.cuda = types.SimpleNamespace(current_stream=lambda: stream, init=lambda: None)
    return torch


def recording_runtime():
    rt = object.__new__(kerntune.Runtime)
    rt._lib, rt._handle = RecordingLibrary(), None
    return rt


@test
def runtime_launches_nothing_on_mismatched_tensors():
    with torch_module(fake_torch()):
        rt = recording_runtime()
        a, w = FakeTensor((256, 256)), FakeTensor((256, 256))
        expect_error(lambda: rt.gemm(a, w, out=FakeTensor((1, 1))), "out")
        expect_error(lambda: rt.gemm(a, w, layout="xx"), "'xx'")
        expect_error(lambda: rt.gemm(a, FakeTensor((256, 256), "float16")), "b is float16")
        expect_error(lambda: rt.gemm(a, w, out=FakeTensor((256, 256), device="cpu")), "out is on cpu")
        q, k = FakeTensor((1, 4, 256, 128)), FakeTensor((1, 4, 256, 128))
        expect_error(lambda: rt.attention(q, k, FakeTensor((1, 4, 16, 128))), "v has shape")
        expect_error(lambda: rt.attention(q, FakeTensor((1, 4, 256, 64)), FakeTensor((1, 4, 256, 64))),
                     "head_dim 64")
        expect_error(lambda: rt.attention(q, k, k, layout="xx"), "'xx'")
        assert rt._lib.launches == [], rt._lib.launches
        rt.gemm(a, w)
        rt.attention(q, k, k, return_lse=True)
        assert [kind for kind, _ in rt._lib.launches] == ["gemm", "attention"], rt._lib.launches
        assert rt._lib.launches[0][1][1:4] == (256, 256, 256), rt._lib.launches[0]


@test
def missing_torch_is_a_kerntune_error():
    with torch_module(None):  # import torch raises ImportError
        expect_error(lambda: kerntune.Runtime(), "PyTorch", "pip install torch")
        expect_error(lambda: runtime_module._torch(), "PyTorch")


@test
def a_wrong_kerntune_lib_is_a_kerntune_error():
    here = os.path.join(os.path.dirname(__file__), "..")
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import kerntune\n"
              "try:\n    kerntune.library()\nexcept kerntune.KerntuneError as e:\n"
              "    print('KerntuneError', e)\n")
    for bad in ("/nonexistent/libkerntune.so", "libc.so.6"):
        env = dict(os.environ, KERNTUNE_LIB=bad)
        result = subprocess.run([sys.executable, "-c", script, here], env=env,
                                capture_output=True, text=True, check=False)
        assert result.stdout.startswith("KerntuneError") and bad in result.stdout, \
            (bad, result.stdout, result.stderr)


def main():
    for function in PASSED:
        function()
    print(f"python checks: {len(PASSED)} passed, 0 failed")


if __name__ == "__main__":
    main()
