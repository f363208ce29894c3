// Device kernels that verify GEMM candidates on the GPU: random and NaN fills, an FP64 reference
// for sampled elements of C, and a gather of C's samples with a count of its non-finite values.
// Every kernel is a grid-stride loop, so any grid covers its work; blocks are multiples of 32.
#pragma once

#include "kerntune/common/dtypes.cuh"

namespace kt {
namespace check {

// splitmix64's finalizer: a bijective 64-bit mix.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace check

// out[i] = a value uniform in [-scale, scale) drawn from a hash of (seed, i), converted to T
// (kt::bf16, kt::fp16 or float) with round-to-nearest-even. The same (seed, count) gives the
// same data whatever the launch shape.
template <typename T>
__global__ void fill_random(T* out, long long count, unsigned long long seed, float scale) {
  const unsigned long long key = check::mix64(seed);
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const unsigned long long h =
        check::mix64(key + (static_cast<unsigned long long>(i) + 1) * 0x9E3779B97F4A7C15ull);
    const float unit = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
    out[i] = DTypeTraits<T>::from_float((2.0f * unit - 1.0f) * scale);
  }
}

// out[i] = NaN (all-ones 16-bit pattern, or 0x7FFFFFFF for float) for i < count.
template <typename T>
__global__ void fill_poison(T* out, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = DTypeTraits<T>::nan();
  }
}

// out[s] = sum over kk < k of a[rows[s], kk] * B[kk, cols[s]] in FP64, for s < num_samples, where
// A is m x k row-major (lda) and B is n x k row-major (kBIsNxK) or k x n row-major (ldb). One
// warp per sample: lanes split K, then a shuffle reduction. A sample outside m x n gives NaN.
template <typename TIn, bool kBIsNxK>
__global__ void gemm_reference_samples(const TIn* a, const TIn* b, long long lda, long long ldb,
                                       int m, int n, int k, const int* rows, const int* cols,
                                       int num_samples, double* out) {
  const int lane = threadIdx.x % 32;
  const long long warps = static_cast<long long>(gridDim.x) * blockDim.x / 32;
  for (long long s = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       s < num_samples; s += warps) {
    const int row = rows[s];
    const int col = cols[s];
    if (row < 0 || row >= m || col < 0 || col >= n) {
      if (lane == 0) out[s] = static_cast<double>(DTypeTraits<float>::nan());
      continue;
    }
    double sum = 0.0;
    for (int kk = lane; kk < k; kk += 32) {
      const TIn b_elem = kBIsNxK ? b[col * ldb + kk] : b[kk * ldb + col];
      sum += static_cast<double>(DTypeTraits<TIn>::to_float(a[row * lda + kk])) *
             static_cast<double>(DTypeTraits<TIn>::to_float(b_elem));
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
    if (lane == 0) out[s] = sum;
  }
}

// Adds the number of NaN or Inf elements of C (m x n, row-major, ldc) to *nonfinite_count (one
// atomic per block), and sets gathered[s] = C[rows[s], cols[s]] in FP64 for s < num_samples.
// Blocks stride over the rows, threads over the columns.
template <typename TOut>
__global__ void gather_and_count_nonfinite(const TOut* c, long long ldc, int m, int n,
                                           const int* rows, const int* cols, int num_samples,
                                           double* gathered, unsigned long long* nonfinite_count) {
  __shared__ unsigned long long block_count;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  unsigned long long count = 0;
  for (int row = blockIdx.x; row < m; row += gridDim.x) {
    const TOut* c_row = c + row * ldc;
    for (int col = threadIdx.x; col < n; col += blockDim.x) {
      if (!DTypeTraits<TOut>::is_finite(c_row[col])) ++count;
    }
  }
  if (count != 0) atomicAdd(&block_count, count);
  __syncthreads();
  if (threadIdx.x == 0 && block_count != 0) atomicAdd(nonfinite_count, block_count);

  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long s = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; s < num_samples;
       s += stride) {
    gathered[s] = static_cast<double>(DTypeTraits<TOut>::to_float(c[rows[s] * ldc + cols[s]]));
  }
}

}  // namespace kt
