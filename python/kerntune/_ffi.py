"""ctypes declarations of include/kerntune/kerntune.h and the search for libkerntune.so."""
import ctypes
import os
from pathlib import Path

KT_DTYPES = {"bfloat16": 0, "float16": 1, "float32": 2}
KT_LAYOUT_NN, KT_LAYOUT_NT = 0, 1


class KerntuneError(RuntimeError):
    """A kerntune call failed; the message is the library's, naming the problem."""

    def __init__(self, status, message):
        super().__init__(f"kerntune error {status}: {message}")
        self.status = status


class AttentionArgs(ctypes.Structure):
    _fields_ = [
        ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64), ("heads_kv", ctypes.c_int64),
        ("seqlen_q", ctypes.c_int64), ("seqlen_k", ctypes.c_int64), ("head_dim", ctypes.c_int64),
        ("dtype", ctypes.c_int), ("causal", ctypes.c_int),
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p), ("lse", ctypes.c_void_p),
        ("q_strides", ctypes.c_int64 * 3), ("k_strides", ctypes.c_int64 * 3),
        ("v_strides", ctypes.c_int64 * 3), ("o_strides", ctypes.c_int64 * 3),
        ("softmax_scale", ctypes.c_float),
    ]


class AttentionBackwardArgs(ctypes.Structure):
    _fields_ = [
        ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64), ("heads_kv", ctypes.c_int64),
        ("seqlen_q", ctypes.c_int64), ("seqlen_k", ctypes.c_int64), ("head_dim", ctypes.c_int64),
        ("dtype", ctypes.c_int), ("causal", ctypes.c_int), ("deterministic", ctypes.c_int),
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p), ("dout", ctypes.c_void_p), ("lse", ctypes.c_void_p),
        ("dq", ctypes.c_void_p), ("dk", ctypes.c_void_p), ("dv", ctypes.c_void_p),
        ("q_strides", ctypes.c_int64 * 3), ("k_strides", ctypes.c_int64 * 3),
        ("v_strides", ctypes.c_int64 * 3), ("o_strides", ctypes.c_int64 * 3),
        ("dout_strides", ctypes.c_int64 * 3), ("dq_strides", ctypes.c_int64 * 3),
        ("dk_strides", ctypes.c_int64 * 3), ("dv_strides", ctypes.c_int64 * 3),
        ("softmax_scale", ctypes.c_float),
    ]


class RmsnormArgs(ctypes.Structure):
    _fields_ = [
        ("rows", ctypes.c_int64), ("hidden", ctypes.c_int64), ("dtype", ctypes.c_int),
        ("x", ctypes.c_void_p), ("weight", ctypes.c_void_p), ("y", ctypes.c_void_p),
        ("residual", ctypes.c_void_p), ("residual_out", ctypes.c_void_p), ("eps", ctypes.c_float),
    ]


class DispatchInfo(ctypes.Structure):
    _fields_ = [
        ("config_key", ctypes.c_char * 160), ("grade", ctypes.c_char * 32),
        ("tuned_problem_key", ctypes.c_char * 160), ("compiled_now", ctypes.c_int),
        ("predicted", ctypes.c_int),
    ]


class RuntimeOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("database_path", ctypes.c_char_p),
        ("read_only", ctypes.c_int), ("device_ordinal", ctypes.c_int),
        ("record_path", ctypes.c_char_p), ("benchmark_candidates", ctypes.c_int),
    ]


STATS_GRADES = ("exact", "benchmarked", "same_model", "same_cc", "nearest_shape", "predicted",
                "model_default", "fallback")


class RuntimeStats(ctypes.Structure):
    _fields_ = [(grade, ctypes.c_int64) for grade in STATS_GRADES] + [
        ("cubins_from_database", ctypes.c_int64), ("cubins_compiled", ctypes.c_int64),
        ("problems_recorded", ctypes.c_int64), ("nvrtc_loaded", ctypes.c_int),
    ]


# The library's version and its SONAME, as cmake/install.cmake names them (the package test
# checks both against the built library): the SONAME carries major.minor while the major
# version is 0.
LIBRARY_VERSION = "0.2.0"
SONAME = "libkerntune.so." + ".".join(LIBRARY_VERSION.split(".")[:2])
# The names of the library in a directory: the development link (and the bundled copy's name),
# the SONAME (all a runtime-only install has), the file itself (a copy that dropped the links).
LIBRARY_NAMES = ("libkerntune.so", SONAME, f"libkerntune.so.{LIBRARY_VERSION}")


def _candidates():
    """Where library() looks when $KERNTUNE_LIB is unset, in order: the copy bundled in this
    package (a wheel built with KERNTUNE_LIB set), <prefix>/lib of the CMake install this package
    came with (<prefix>/lib/python/kerntune), dist/lib and build/ of the checkout it sits in
    (python/kerntune), then the loader's search path (LD_LIBRARY_PATH, ldconfig). In each
    directory, the names of LIBRARY_NAMES in that order; on the loader's path, the first two."""
    here = Path(__file__).resolve().parent
    yield here / "lib" / "libkerntune.so"
    for directory in (here.parent.parent, here.parent.parent / "dist" / "lib",
                      here.parent.parent / "build"):
        for name in LIBRARY_NAMES:
            yield directory / name
    for name in LIBRARY_NAMES[:2]:
        yield Path(name)


_lib = None
_SYMBOLS = ("kt_runtime_open", "kt_runtime_open_options", "kt_runtime_get_stats", "kt_runtime_close",
            "kt_gemm", "kt_attention_forward",
            "kt_last_error", "kt_version")


def _load(path):
    """ctypes.CDLL(path) when it is kerntune's library (it has every symbol of kerntune.h);
    raises OSError otherwise."""
    lib = ctypes.CDLL(str(path))
    missing = [name for name in _SYMBOLS if not hasattr(lib, name)]
    if missing:
        raise OSError(f"not libkerntune.so: it lacks {', '.join(missing)}")
    return lib


def library():
    """The loaded libkerntune.so: $KERNTUNE_LIB when set (and then only it), else the first of
    _candidates() that loads. Raises KerntuneError naming what was tried."""
    global _lib
    if _lib is not None:
        return _lib
    explicit = os.environ.get("KERNTUNE_LIB")
    if explicit:
        try:
            lib = _load(explicit)
        except OSError as e:
            raise KerntuneError(6, f"KERNTUNE_LIB={explicit} cannot be loaded as kerntune's "
                                   f"library ({e}); point it at libkerntune.so or unset it") from None
    else:
        tried = []
        for path in _candidates():
            try:
                lib = _load(path)
                break
            except OSError as e:
                tried.append(f"{path}: {e}")
        else:
            raise KerntuneError(6, "cannot load libkerntune.so; build it (cmake --build build), "
                                   "install a wheel that bundles it, or set KERNTUNE_LIB. "
                                   "Tried:\n  " + "\n  ".join(tried))
    lib.kt_runtime_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    lib.kt_runtime_open.restype = ctypes.c_int
    lib.kt_runtime_open_device.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_void_p)]
    lib.kt_runtime_open_device.restype = ctypes.c_int
    lib.kt_runtime_open_options.argtypes = [ctypes.POINTER(RuntimeOptions),
                                            ctypes.POINTER(ctypes.c_void_p)]
    lib.kt_runtime_open_options.restype = ctypes.c_int
    lib.kt_runtime_get_stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(RuntimeStats)]
    lib.kt_runtime_get_stats.restype = ctypes.c_int
    lib.kt_runtime_close.argtypes = [ctypes.c_void_p]
    lib.kt_runtime_close.restype = None
    lib.kt_gemm.argtypes = [ctypes.c_void_p] + [ctypes.c_int64] * 3 + [ctypes.c_int] * 3 + \
        [ctypes.c_void_p] * 4
    lib.kt_gemm.restype = ctypes.c_int
    lib.kt_attention_forward.argtypes = [ctypes.c_void_p, ctypes.POINTER(AttentionArgs), ctypes.c_void_p]
    lib.kt_attention_forward.restype = ctypes.c_int
    lib.kt_attention_varlen.argtypes = [ctypes.c_void_p, ctypes.POINTER(AttentionArgs),
                                        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_void_p]
    lib.kt_attention_varlen.restype = ctypes.c_int
    lib.kt_attention_backward.argtypes = [ctypes.c_void_p, ctypes.POINTER(AttentionBackwardArgs),
                                          ctypes.c_void_p]
    lib.kt_attention_backward.restype = ctypes.c_int
    lib.kt_rmsnorm.argtypes = [ctypes.c_void_p, ctypes.POINTER(RmsnormArgs), ctypes.c_void_p]
    lib.kt_rmsnorm.restype = ctypes.c_int
    lib.kt_prepare.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.POINTER(DispatchInfo)]
    lib.kt_prepare.restype = ctypes.c_int
    lib.kt_last_error.restype = ctypes.c_char_p
    lib.kt_version.restype = ctypes.c_char_p
    _lib = lib
    return lib


def check(status):
    if status != 0:
        raise KerntuneError(status, library().kt_last_error().decode())


def version():
    return library().kt_version().decode()
