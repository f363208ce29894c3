// A CUtensorMap as kernels see it, shared by the host (C++) and the device (NVRTC): 128 opaque
// bytes filled on the host by cuTensorMapEncodeTiled. It must travel inside a
// `const __grid_constant__` kernel parameter: the TMA unit reads it from parameter space through
// its generic address. TMA needs 64-byte alignment; 128 is what CUDA 13's cuda.h gives
// CUtensorMap, so the host can encode into it in place.
#pragma once

namespace kt {

struct alignas(128) TmaDescriptor {
  unsigned long long words[16];
};

}  // namespace kt
