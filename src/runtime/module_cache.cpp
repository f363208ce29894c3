// Loaded CUDA modules keyed by compile key.
#include "runtime/module_cache.hpp"

#include <fmt/format.h>

#include "cache/cubin_image.hpp"
#include "core/error.hpp"
#include "runtime/cuda_driver.hpp"

namespace kt::rt {

ModuleCache::~ModuleCache() {
  for (auto& [key, module] : modules_)
    if (module->module != nullptr) driver().module_unload(module->module);
}

const LoadedModule& ModuleCache::load(const cache::CubinRecord& record) {
  std::lock_guard lock(mutex_);
  auto it = modules_.find(record.compile_key);
  if (it != modules_.end()) return *it->second;
  // NOTE: cuModuleLoadData takes no length: it reads as far as the image's headers say. Bytes
  // that are not a well-formed cubin holding every kernel looked up below never reach the driver.
  if (const std::string problem = cache::cubin_image_problem(record.cubin, record.lowered_names);
      !problem.empty()) {
    throw CudaError(
        fmt::format("cubin check before cuModuleLoadData for {} ({}, arch {}): {}",
                    record.source_name, record.compile_key.substr(0, 12), record.arch, problem),
        CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE");
  }
  const CudaDriver& d = driver();
  auto loaded = std::make_unique<LoadedModule>();
  const auto fail = [&](const char* call, CUresult r) {
    const char* name = "?";
    d.get_error_name(r, &name);
    throw CudaError(fmt::format("{} for {} ({}, arch {})", call, record.source_name,
                                record.compile_key.substr(0, 12), record.arch),
                    r, name);
  };
  if (const CUresult r = d.module_load_data(&loaded->module, record.cubin.data());
      r != CUDA_SUCCESS)
    fail("cuModuleLoadData", r);
  for (const auto& lowered : record.lowered_names) {
    CUfunction f = nullptr;
    if (const CUresult r = d.module_get_function(&f, loaded->module, lowered.c_str());
        r != CUDA_SUCCESS) {
      d.module_unload(loaded->module);
      fail("cuModuleGetFunction", r);
    }
    loaded->functions.push_back(f);
  }
  const LoadedModule& result = *loaded;
  modules_.emplace(record.compile_key, std::move(loaded));
  return result;
}

}  // namespace kt::rt
