// The RMSNorm kernel's parameter block, shared verbatim by the host (C++) and the device
// (NVRTC): plain types only; the host static_asserts the layout (rmsnorm_launcher.cpp).
#pragma once

namespace kt {

struct RmsnormParams {
  const void* x;         // rows x hidden, dense rows, 16-byte aligned
  const void* weight;    // hidden
  const void* residual;  // rows x hidden, added to x first (kResidual only)
  void* residual_out;    // rows x hidden, receives x + residual (kResidual only; may be residual)
  void* y;               // rows x hidden
  long long rows;
  float eps;
  int unused;
};

}  // namespace kt
