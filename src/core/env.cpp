// Every environment variable kerntune reads, in one place.
#include "core/env.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kt::env {

namespace {
std::optional<std::string> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}
}  // namespace

std::optional<std::string> database_path() { return get("KERNTUNE_DB"); }
std::optional<std::string> xdg_cache_home() { return get("XDG_CACHE_HOME"); }
std::optional<std::string> home() { return get("HOME"); }
std::optional<std::string> log_level() { return get("KERNTUNE_LOG_LEVEL"); }
std::string cuda_home() {
  if (auto v = get("CUDA_HOME")) return *v;
  if (auto v = get("CUDA_PATH")) return *v;
  return "/usr/local/cuda";
}
std::optional<std::string> nvrtc_library() { return get("KERNTUNE_NVRTC"); }
std::optional<std::string> cuda_driver_library() { return get("KERNTUNE_CUDA_DRIVER"); }

std::optional<std::string> record_path() { return get("KERNTUNE_RECORD"); }

std::optional<int> benchmark_candidates() {
  const std::optional<std::string> text = get("KERNTUNE_BENCHMARK");
  if (!text) return std::nullopt;
  const std::int64_t count =
      parse_int(*text, "KERNTUNE_BENCHMARK (how many configs to time on a problem's first call)");
  if (count < 0 || count > kMaxBenchmarkCandidates)
    throw_invalid(fmt::format(
        "KERNTUNE_BENCHMARK = '{}' is out of range: give 0 (off) to {} configs to time on a "
        "problem's first call",
        *text, kMaxBenchmarkCandidates));
  return int(count);
}

std::optional<std::string> worker_path() { return get("KERNTUNE_WORKER"); }
std::optional<std::string> test_faults() { return get("KERNTUNE_TEST_FAULTS"); }

std::optional<std::string> cublaslt_library() { return get("KERNTUNE_CUBLASLT"); }

std::optional<std::string> python_executable() { return get("KERNTUNE_PYTHON"); }
std::optional<std::string> python_path() { return get("PYTHONPATH"); }

}  // namespace kt::env
