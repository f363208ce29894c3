// The second pass of split-KV attention: each row's num_splits partial outputs (each normalized by
// its own row sum) and their logsumexps, as the fa3 kernel writes them (AttentionParams::partials),
// combined into O = Σ_s e^(lse_s − lse) O_s with lse = ln Σ_s e^(lse_s), and lse written when
// p.lse is set. A split that saw no visible key has lse_s = −inf and weighs 0; a row with no
// visible key at all gets O = 0 and lse = −inf, as the one-pass kernel. Instantiated by NVRTC
// name expressions (kt::attention_split_combine<...>) beside the split kernel.
#pragma once

#include "kerntune/attention/attention_params.h"
#include "kerntune/attention/softmax_rows.cuh"
#include "kerntune/common/dtypes.cuh"

namespace kt {

// Launch: grid ceil(batch · heads_q · seqlen_q / 4), 128 threads: one warp a row, each lane
// kHeadDim / 32 consecutive columns; num_splits <= 32 (lane s reads split s's logsumexp).
template <typename T, int kHeadDim>
__global__ void __launch_bounds__(128) attention_split_combine(const AttentionParams p) {
  static_assert(kHeadDim % 64 == 0 && kHeadDim <= 256, "kHeadDim must be 64, 128 or 256");
  constexpr int kCols = kHeadDim / 32;
  const long long rows = static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q;
  const long long row = static_cast<long long>(blockIdx.x) * 4 + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;

  const float* lse_parts = p.partials + p.num_splits * rows * kHeadDim;
  const float lse_s =
      lane < p.num_splits ? lse_parts[lane * rows + row] : attn::negative_infinity();
  float lse_max = lse_s;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    lse_max = fmaxf(lse_max, __shfl_xor_sync(0xFFFFFFFFu, lse_max, offset));
  const float weight = lse_s == attn::negative_infinity() ? 0.0f : __expf(lse_s - lse_max);
  float sum = weight;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);

  float acc[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) acc[c] = 0.0f;
  for (int s = 0; s < p.num_splits; ++s) {
    const float w = __shfl_sync(0xFFFFFFFFu, weight, s);
    if (w == 0.0f) continue;  // the same for the whole warp
    const float* part = p.partials + (s * rows + row) * kHeadDim + lane * kCols;
#pragma unroll
    for (int c = 0; c < kCols; c += 2) {
      struct alignas(8) Pair {
        float lo, hi;
      };
      const Pair v = *reinterpret_cast<const Pair*>(part + c);
      acc[c] = fmaf(w, v.lo, acc[c]);
      acc[c + 1] = fmaf(w, v.hi, acc[c + 1]);
    }
  }

  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  const int i = static_cast<int>(row % p.seqlen_q);
  const long long bh = row / p.seqlen_q;
  const int h = static_cast<int>(bh % p.heads_q);
  const int b = static_cast<int>(bh / p.heads_q);
  T* out = static_cast<T*>(p.o) + b * p.o_stride.batch + h * p.o_stride.head + i * p.o_stride.row +
           lane * kCols;
#pragma unroll
  for (int c = 0; c < kCols; c += 2) store_two<T>(out + c, acc[c] * inv, acc[c + 1] * inv);
  if (p.lse != nullptr && lane == 0)
    p.lse[row] = sum > 0.0f ? lse_max + logf(sum) : attn::negative_infinity();
}

}  // namespace kt
