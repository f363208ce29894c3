// Row reductions of the online softmax shared by the attention families: the mma.sync and wgmma
// accumulator layouts give each row's values to the four lanes of a quad (lane / 4 equal).
#pragma once

namespace kt {
namespace attn {

// Sum (kMax false) or maximum (kMax true) of `v` over the four lanes of a quad (lane / 4 equal),
// which hold the same accumulator rows.
template <bool kMax>
__device__ __forceinline__ float quad_reduce(float v) {
#pragma unroll
  for (int offset = 1; offset < 4; offset *= 2) {
    const float other = __shfl_xor_sync(0xFFFFFFFFu, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  return v;
}

__device__ __forceinline__ float negative_infinity() { return __uint_as_float(0xFF800000u); }

}  // namespace attn
}  // namespace kt
