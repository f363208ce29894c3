// Lazy NVRTC loading.
#include "generator/nvrtc_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <type_traits>
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
// Binds `member` to the symbol `fn`, whose type (nvrtc.h's) it must have.
#define KT_BIND(fn, member)                                                      \
  static_assert(std::is_same_v<decltype(&::fn), decltype(member)>, #fn " type"); \
  bind(handle, #fn, member, path)
    KT_BIND(nvrtcVersion, lib.version);
    KT_BIND(nvrtcGetErrorString, lib.get_error_string);
    KT_BIND(nvrtcCreateProgram, lib.create_program);
    KT_BIND(nvrtcDestroyProgram, lib.destroy_program);
    KT_BIND(nvrtcCompileProgram, lib.compile_program);
    KT_BIND(nvrtcGetCUBINSize, lib.get_cubin_size);
    KT_BIND(nvrtcGetCUBIN, lib.get_cubin);
    KT_BIND(nvrtcGetPTXSize, lib.get_ptx_size);
    KT_BIND(nvrtcGetPTX, lib.get_ptx);
    KT_BIND(nvrtcGetProgramLogSize, lib.get_log_size);
    KT_BIND(nvrtcGetProgramLog, lib.get_log);
    KT_BIND(nvrtcAddNameExpression, lib.add_name_expression);
    KT_BIND(nvrtcGetLoweredName, lib.get_lowered_name);
#undef KT_BIND
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
