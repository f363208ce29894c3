// Context binding.
#include "runtime/context.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "runtime/cuda_driver.hpp"

namespace kt::rt {

BoundContext::BoundContext(int ordinal) {
  const CudaDriver& d = driver();
  check(d.ctx_get_current(&context_), "cuCtxGetCurrent");
  if (context_ != nullptr) {
    check(d.ctx_get_device(&device_), "cuCtxGetDevice");
    return;
  }
  int count = 0;
  check(d.device_get_count(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw_invalid(fmt::format("device ordinal {} does not exist ({} devices)", ordinal, count));
  check(d.device_get(&device_, ordinal), "cuDeviceGet");
  check(d.primary_ctx_retain(&context_, device_), "cuDevicePrimaryCtxRetain");
  retained_primary_ = true;
  check(d.ctx_set_current(context_), "cuCtxSetCurrent");
}

BoundContext::~BoundContext() {
  if (!retained_primary_) return;
  // NOTE: a released primary context stays "current" on this thread as a stale handle; clear it
  // so the next BoundContext retains afresh instead of binding to an inactive context.
  CUcontext current = nullptr;
  if (driver().ctx_get_current(&current) == CUDA_SUCCESS && current == context_)
    driver().ctx_set_current(nullptr);
  driver().primary_ctx_release(device_);
}

ScopedCurrent::ScopedCurrent(CUcontext context) {
  const CudaDriver& d = driver();
  CUcontext current = nullptr;
  d.ctx_get_current(&current);
  if (current != context) {
    check(d.ctx_push_current(context), "cuCtxPushCurrent");
    pushed_ = true;
  }
}

ScopedCurrent::~ScopedCurrent() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver().ctx_pop_current(&popped);
  }
}

}  // namespace kt::rt
