// The CUDA context a runtime is bound to, and a guard that makes it current only when the
// calling thread has another one (a cheap check on the hot path).
#pragma once

#include <cuda.h>

#include "core/device_desc.hpp"

namespace kt::rt {

class BoundContext {
 public:
  // The calling thread's current context, else the primary context of `ordinal`.
  explicit BoundContext(int ordinal);
  ~BoundContext();
  BoundContext(const BoundContext&) = delete;
  BoundContext& operator=(const BoundContext&) = delete;

  CUcontext context() const { return context_; }
  CUdevice device() const { return device_; }

 private:
  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  bool retained_primary_ = false;
};

class ScopedCurrent {
 public:
  explicit ScopedCurrent(CUcontext context);
  ~ScopedCurrent();
  ScopedCurrent(const ScopedCurrent&) = delete;
  ScopedCurrent& operator=(const ScopedCurrent&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace kt::rt
