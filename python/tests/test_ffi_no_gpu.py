"""What the Python package can check without a GPU (the CI tier): the library loads through
ctypes, reports its version, and opening a runtime without a driver is a clear error."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kerntune import _ffi  # noqa: E402


def main():
    lib = _ffi.library()
    assert _ffi.version().count(".") == 2, _ffi.version()
    import ctypes
    handle = ctypes.c_void_p()
    status = lib.kt_runtime_open(b"/tmp/kt_py_ffi.db", 0, ctypes.byref(handle))
    if os.environ.get("KERNTUNE_CUDA_DRIVER", "").startswith("/nonexistent"):
        assert status == 6, status  # KT_ERROR_NOT_FOUND: no driver
        assert b"driver" in lib.kt_last_error(), lib.kt_last_error()
    # The options struct's size is checked first; record mode's path travels with the rest.
    options = _ffi.RuntimeOptions()
    options.struct_size = 4
    status = lib.kt_runtime_open_options(ctypes.byref(options), ctypes.byref(handle))
    assert status == 1 and b"struct_size is 4" in lib.kt_last_error(), lib.kt_last_error()
    options.struct_size = ctypes.sizeof(_ffi.RuntimeOptions)
    options.database_path = b"/tmp/kt_py_ffi.db"
    options.record_path = b"/tmp/kt_py_ffi_manifest.txt"
    status = lib.kt_runtime_open_options(ctypes.byref(options), ctypes.byref(handle))
    if os.environ.get("KERNTUNE_CUDA_DRIVER", "").startswith("/nonexistent"):
        assert status == 6 and b"driver" in lib.kt_last_error(), lib.kt_last_error()
    assert ctypes.sizeof(_ffi.RuntimeOptions) == 4 + 4 + 8 + 4 + 4 + 8 + 4 + 4
    assert ctypes.sizeof(_ffi.RuntimeStats) == 11 * 8 + 8
    stats = _ffi.RuntimeStats()
    status = lib.kt_runtime_get_stats(None, ctypes.byref(stats))
    assert status == 1 and b"runtime is NULL" in lib.kt_last_error(), lib.kt_last_error()
    args = _ffi.AttentionArgs()
    assert ctypes.sizeof(args) == 6 * 8 + 2 * 4 + 5 * 8 + 12 * 8 + 8, ctypes.sizeof(args)
    status = lib.kt_attention_forward(None, ctypes.byref(args), None)
    # Arguments are checked before the handle: the zeroed sizes are reported first.
    assert status == 1 and b"batch (b) = 0" in lib.kt_last_error(), lib.kt_last_error()
    print("python ffi: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
