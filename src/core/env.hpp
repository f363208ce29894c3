// Every environment variable kerntune reads, in one place, each with its meaning.
#pragma once

#include <optional>
#include <string>

namespace kt::env {

// KERNTUNE_DB: path of the tuning database (overridden by --db).
std::optional<std::string> database_path();
// XDG_CACHE_HOME, then HOME: where the default database lives.
std::optional<std::string> xdg_cache_home();
std::optional<std::string> home();
// KERNTUNE_LOG_LEVEL: trace, debug, info, warn, error or off (the CLI's default is info).
std::optional<std::string> log_level();
// CUDA_HOME / CUDA_PATH: toolkit root for NVRTC's headers and library (default /usr/local/cuda).
std::string cuda_home();
// KERNTUNE_NVRTC: explicit path of libnvrtc.so to dlopen.
std::optional<std::string> nvrtc_library();
// KERNTUNE_CUDA_DRIVER: explicit path of libcuda.so.1 to dlopen (tests use a bogus path to
// simulate a machine without a driver).
std::optional<std::string> cuda_driver_library();

// KERNTUNE_RECORD: record mode's manifest (RuntimeOptions::record_path when that is empty): every
// problem a runtime serves without an exact tuned entry is appended to it.
std::optional<std::string> record_path();
// KERNTUNE_BENCHMARK: benchmark mode's candidate count (RuntimeOptions::benchmark_candidates when
// that is negative): a whole number from 0 (off) to kMaxBenchmarkCandidates. Throws kt::Error
// (invalid argument) naming the variable and its value otherwise.
std::optional<int> benchmark_candidates();
constexpr int kMaxBenchmarkCandidates = 64;

// KERNTUNE_WORKER: explicit path of the kerntune-worker executable the tuner runs candidates in.
std::optional<std::string> worker_path();
// KERNTUNE_TEST_FAULTS: test only. `configkey:kind,...` breaks those candidates on purpose
// (kinds: oob, trap, hang, wrong, compile_crash); read by `kerntune tune`.
std::optional<std::string> test_faults();

// KERNTUNE_CUBLASLT: explicit path of libcublasLt.so for `kerntune bench`'s baseline.
std::optional<std::string> cublaslt_library();

// KERNTUNE_PYTHON: the python3 `kerntune report` renders with (it needs matplotlib); unset, the
// first of python3 on PATH and /usr/bin/python3 that imports matplotlib.
std::optional<std::string> python_executable();
// PYTHONPATH: kept, after the kerntune package's directory, for the renderer it runs.
std::optional<std::string> python_path();

}  // namespace kt::env
