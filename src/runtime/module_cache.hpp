// Loaded CUDA modules, one per compile key, owned for the lifetime of the cache (and so of the
// runtime). Loading is idempotent and thread-safe.
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/database.hpp"

namespace kt::rt {

struct LoadedModule {
  CUmodule module = nullptr;
  std::vector<CUfunction> functions;  // in the record's lowered_names order
};

class ModuleCache {
 public:
  ModuleCache() = default;
  ~ModuleCache();
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // Loads `record.cubin` into the current context (once per compile key) and looks up every
  // kernel. Bytes that fail cache::cubin_image_problem never reach the driver (nor is it loaded
  // for them): CudaError CUDA_ERROR_INVALID_IMAGE naming the problem. Throws CudaError (with the
  // driver's code) naming the call and the kernel on failure, and then caches nothing for the
  // key.
  const LoadedModule& load(const cache::CubinRecord& record);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<LoadedModule>> modules_;
};

}  // namespace kt::rt
