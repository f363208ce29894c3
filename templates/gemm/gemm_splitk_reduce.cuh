// The split-K reduce shared by the GEMM families: sums the FP32 partial-sum slices that the
// main kernel's splits wrote and converts the sum to the output type; and the K range a split
// of the main kernel sums.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/gemm/gemm_params.h"

namespace kt {

// The K range [k_begin, k_end) of this CTA's split of a workspace-reduced split-K launch:
// [z * k_per_split, min(k, (z + 1) * k_per_split)) for z = blockIdx.z; the whole of K when
// kSplitK is off. Empty when z's range starts past k.
template <bool kSplitK>
__device__ __forceinline__ void split_k_range(const GemmParams& params, long long& k_begin,
                                              long long& k_end) {
  k_begin = 0;
  k_end = params.k;
  if constexpr (kSplitK) {
    k_begin = static_cast<long long>(blockIdx.z) * params.k_per_split;
    const long long split_end = k_begin + params.k_per_split;
    k_end = split_end < params.k ? split_end : params.k;
  }
}

// C = sum over `splits` FP32 slices of the workspace (slice stride m * n, row stride n),
// converted to TOut (leading dimension ldc). Element i of a slice is C[i / n, i % n].
// Launch: ceil(ceil(m * n / 2) / 512) blocks of 256 threads; each thread sums 2 pairs of
// adjacent elements (a grid-stride loop covers any smaller grid).
template <typename TOut>
__global__ void __launch_bounds__(256) gemm_splitk_reduce(const SplitKReduceParams params) {
  constexpr int kThreads = 256;
  constexpr int kPairsPerThread = 2;
  const long long count = static_cast<long long>(params.m) * params.n;
  const long long num_pairs = (count + 1) / 2;
  const float* ws = params.workspace;
  TOut* c = static_cast<TOut*>(params.c);
  const long long n = params.n;
  // Whole pairs load as 8 bytes when every slice starts 8-byte aligned.
  const bool vector_in = count % 2 == 0 && reinterpret_cast<unsigned long long>(ws) % 8 == 0;
  const bool aligned = pairs_aligned(c, params.ldc);
  struct alignas(8) Pair {
    float lo, hi;
  };

  for (long long first = static_cast<long long>(blockIdx.x) * kThreads * kPairsPerThread;
       first < num_pairs; first += static_cast<long long>(gridDim.x) * kThreads * kPairsPerThread) {
#pragma unroll
    for (int j = 0; j < kPairsPerThread; ++j) {
      const long long pair = first + j * kThreads + threadIdx.x;
      if (pair >= num_pairs) break;
      const long long i = 2 * pair;
      const bool has_hi = i + 1 < count;
      float lo = 0.0f, hi = 0.0f;
      if (vector_in) {
#pragma unroll 4
        for (int z = 0; z < params.splits; ++z) {
          const Pair v = *reinterpret_cast<const Pair*>(ws + z * count + i);
          lo += v.lo;
          hi += v.hi;
        }
      } else {
#pragma unroll 4
        for (int z = 0; z < params.splits; ++z) {
          lo += ws[z * count + i];
          if (has_hi) hi += ws[z * count + i + 1];
        }
      }
      const long long row = i / n;
      const long long col = i - row * n;
      if (has_hi && col + 1 < n && aligned) {
        store_two(c + row * params.ldc + col, lo, hi);
      } else {
        store_one(c + row * params.ldc + col, lo);
        if (has_hi) {
          const long long row_hi = col + 1 < n ? row : row + 1;
          const long long col_hi = col + 1 < n ? col + 1 : 0;
          store_one(c + row_hi * params.ldc + col_hi, hi);
        }
      }
    }
  }
}

}  // namespace kt
