// The runtime's facet of an op: turning a loaded module into a kernel that launches the op's
// calls. Registered with the op (core/op_registry.hpp); the runtime reaches it by problem key.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/device_desc.hpp"
#include "runtime/module_cache.hpp"

namespace kt::rt {

// Whether `pointer` is a multiple of `bytes`: the alignment rule every op's check_call applies.
inline bool aligned(const void* pointer, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
inline bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

// One (problem, config)'s kernels, loaded and planned. launch() allocates nothing.
class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Enqueues the op on `stream`. `call` is the op's own argument block (its C++ API's struct:
  // GemmCall, AttentionTensors, RmsnormTensors), already checked against the problem;
  // `workspace` is the runtime's scratch (null when it has none). Returns the first failing
  // driver result.
  virtual CUresult launch(const void* call, CUdeviceptr workspace, CUstream stream) const = 0;
  // OpLauncher::check_call against this kernel's problem, parsed once at load: the runtime's
  // warm path, which neither parses nor formats a key.
  virtual void check_call(const void* call) const = 0;
  // Whether this kernel can serve `call` (checked by check_call): false when the call is valid
  // but outside what this config's kernel can address (fa3: a stride TMA cannot encode); the
  // runtime then launches the op's fallback_config for it. Allocates nothing.
  virtual bool serves(const void* /*call*/) const { return true; }
  // Benchmark mode: the scratch timing_call needs for `call` (checked by check_call), the bytes
  // of its outputs that overlap an input. Default: none.
  virtual std::size_t timing_scratch_bytes(const void* /*call*/) const { return 0; }
  // Benchmark mode: a copy of `call` (the op's call struct) that writes only `scratch` (of
  // timing_scratch_bytes(call)), so that each launch of it moves the same bytes as `call` and
  // leaves the caller's tensors alone: an output that overlaps an input moves into `scratch`,
  // except one written exactly over its own input in place, which stays in place over a copy of
  // that input the op enqueues on `stream` (an in-place kernel can run at another speed than one
  // writing apart). Null when the op offers none (benchmark mode then leaves its calls alone).
  // Default: none.
  virtual std::shared_ptr<const void> timing_call(const void* /*call*/, CUdeviceptr /*scratch*/,
                                                  CUstream /*stream*/) const {
    return nullptr;
  }
};

class OpLauncher {
 public:
  virtual ~OpLauncher() = default;
  // The kernel of (problem, config) from `module` (compiled from the op's kernel_source);
  // throws kt::Error when the keys do not parse.
  virtual std::unique_ptr<OpKernel> load(std::string_view problem_key, std::string_view config_key,
                                         const LoadedModule& module) const = 0;
  // Checks the call's arguments against the problem before any launch (pointers, alignment,
  // strides); throws kt::Error (invalid argument) naming the tensor.
  virtual void check_call(std::string_view problem_key, const void* call) const = 0;
  // The config that serves every call check_call accepts, for the calls a resolved kernel does
  // not serve (OpKernel::serves); empty when every kernel of the op serves every valid call.
  virtual std::string fallback_config(std::string_view /*problem_key*/,
                                      const DeviceDesc& /*device*/) const {
    return {};
  }
  // Readies a freshly allocated runtime workspace of `bytes` for this op's kernels (blocking),
  // once per allocation before any launch: GEMM zeroes its split-K flag region. Default: nothing.
  virtual void prepare_workspace(CUdeviceptr /*workspace*/, std::size_t /*bytes*/) const {}
  // Whether this op's kernels take their scratch from the runtime's shared workspace, whose state
  // they keep across launches (GEMM: its split-K flags and launch epoch in the first 64 KB). Any
  // other op's scratch is a buffer of its own, so it never overwrites that state.
  virtual bool uses_shared_workspace() const { return false; }
};

}  // namespace kt::rt
