// Every environment variable kerntune reads, in one place.
#include "core/env.hpp"

#include <cstdlib>

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

std::optional<std::string> worker_path() { return get("KERNTUNE_WORKER"); }
std::optional<std::string> test_faults() { return get("KERNTUNE_TEST_FAULTS"); }

std::optional<std::string> cublaslt_library() { return get("KERNTUNE_CUBLASLT"); }

std::optional<std::string> python_executable() { return get("KERNTUNE_PYTHON"); }
std::optional<std::string> python_path() { return get("PYTHONPATH"); }

}  // namespace kt::env
