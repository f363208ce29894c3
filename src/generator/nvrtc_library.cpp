// Lazy NVRTC loading.
#include "generator/nvrtc_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "core/env.hpp"
#include "core/error.hpp"

namespace kt::gen {

namespace {

template <typename Fn>
void bind(void* handle, const char* symbol, Fn& fn, const std::string& path) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr)
    throw Error(ErrorKind::kNotFound,
                fmt::format("{} lacks symbol {}: is it NVRTC?", path, symbol));
}

NvrtcLibrary load() {
  std::vector<std::string> candidates;
  if (auto explicit_path = env::nvrtc_library()) candidates.push_back(*explicit_path);
  candidates.push_back(env::cuda_home() + "/lib64/libnvrtc.so.13");
  candidates.push_back(env::cuda_home() + "/lib64/libnvrtc.so");
  candidates.push_back("libnvrtc.so.13");
  candidates.push_back("libnvrtc.so");
  std::string tried;
  for (const auto& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      tried += fmt::format("\n  {}: {}", path, dlerror());
      continue;
    }
    NvrtcLibrary lib;
    lib.path = path;
    bind(handle, "nvrtcVersion", lib.version, path);
    bind(handle, "nvrtcGetErrorString", lib.get_error_string, path);
    bind(handle, "nvrtcCreateProgram", lib.create_program, path);
    bind(handle, "nvrtcDestroyProgram", lib.destroy_program, path);
    bind(handle, "nvrtcCompileProgram", lib.compile_program, path);
    bind(handle, "nvrtcGetCUBINSize", lib.get_cubin_size, path);
    bind(handle, "nvrtcGetCUBIN", lib.get_cubin, path);
    bind(handle, "nvrtcGetPTXSize", lib.get_ptx_size, path);
    bind(handle, "nvrtcGetPTX", lib.get_ptx, path);
    bind(handle, "nvrtcGetProgramLogSize", lib.get_log_size, path);
    bind(handle, "nvrtcGetProgramLog", lib.get_log, path);
    bind(handle, "nvrtcAddNameExpression", lib.add_name_expression, path);
    bind(handle, "nvrtcGetLoweredName", lib.get_lowered_name, path);
    int major = 0, minor = 0;
    lib.version(&major, &minor);
    lib.version_string = fmt::format("{}.{}", major, minor);
    return lib;
  }
  throw Error(ErrorKind::kNotFound,
              fmt::format("cannot load NVRTC (the CUDA runtime compiler); tried:{}\nInstall the "
                          "CUDA toolkit, set CUDA_HOME to its root, or set KERNTUNE_NVRTC to the "
                          "path of libnvrtc.so",
                          tried));
}

std::atomic<std::uint64_t> g_requests{0};
std::atomic<bool> g_loaded{false};

}  // namespace

const NvrtcLibrary& nvrtc() {
  g_requests.fetch_add(1, std::memory_order_relaxed);
  static std::once_flag once;
  static NvrtcLibrary library;
  static std::string failure;
  std::call_once(once, [] {
    try {
      library = load();
      g_loaded.store(true);
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(ErrorKind::kNotFound, failure);
  return library;
}

std::uint64_t nvrtc_requests() { return g_requests.load(std::memory_order_relaxed); }

bool nvrtc_loaded() { return g_loaded.load(); }

}  // namespace kt::gen
