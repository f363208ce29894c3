// kt::rmsnorm: y = x · rsqrt(mean(x²) + eps) · w per row, optionally after x = x + r (the sum
// rounded to T, written to residual_out and normalized as rounded, as an add then a norm would).
// FP32 accumulation. kThreadsPerRow threads share a row, each loading kVec elements at a time
// (vector loads of 2·kVec bytes); a CTA holds kRowsPerCta rows. kMode 0 keeps each thread's slice
// of the row in registers between the sum of squares and the scaling, 1 stages it in dynamic
// shared memory, 2 reads it again from global memory (L2) for the scaling.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/rmsnorm/rmsnorm_params.h"

namespace kt {

// A vector of N 2-byte elements, aligned so that it moves as one load or store.
template <int N>
struct alignas(2 * N) RmsnormVec {
  unsigned short h[N];
};

template <typename T, int N>
__device__ __forceinline__ float rmsnorm_element(const RmsnormVec<N>& v, int e) {
  return DTypeTraits<T>::to_float(T{v.h[e]});
}
template <typename T, int N>
__device__ __forceinline__ RmsnormVec<N> rmsnorm_vec(const float (&f)[N]) {
  RmsnormVec<N> v;
#pragma unroll
  for (int e = 0; e < N; ++e) v.h[e] = DTypeTraits<T>::from_float(f[e]).bits;
  return v;
}

// Loads one vector. kStream: past L1 (x and r, each read once), so that L1 keeps what every row
// of the SM reads again (kStream false: the weights, kept with evict_last).
// NOTE: the asm carries a memory clobber: a load must not move above a store that may alias it
// (the sum written over r in place).
template <bool kStream, int N>
__device__ __forceinline__ RmsnormVec<N> rmsnorm_load(const RmsnormVec<N>* p) {
  RmsnormVec<N> v;
  unsigned int* u = reinterpret_cast<unsigned int*>(v.h);
  if constexpr (N == 8) {
    if constexpr (kStream)
      asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(u[0]), "=r"(u[1]), "=r"(u[2]), "=r"(u[3])
                   : "l"(p)
                   : "memory");
    else
      asm volatile("ld.global.L1::evict_last.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(u[0]), "=r"(u[1]), "=r"(u[2]), "=r"(u[3])
                   : "l"(p)
                   : "memory");
  } else if constexpr (N == 4) {
    if constexpr (kStream)
      asm volatile("ld.global.L1::no_allocate.v2.u32 {%0, %1}, [%2];"
                   : "=r"(u[0]), "=r"(u[1])
                   : "l"(p)
                   : "memory");
    else
      asm volatile("ld.global.L1::evict_last.v2.u32 {%0, %1}, [%2];"
                   : "=r"(u[0]), "=r"(u[1])
                   : "l"(p)
                   : "memory");
  } else if constexpr (N == 2) {
    if constexpr (kStream)
      asm volatile("ld.global.L1::no_allocate.u32 %0, [%1];" : "=r"(u[0]) : "l"(p) : "memory");
    else
      asm volatile("ld.global.L1::evict_last.u32 %0, [%1];" : "=r"(u[0]) : "l"(p) : "memory");
  } else {
    if constexpr (kStream)
      asm volatile("ld.global.L1::no_allocate.u16 %0, [%1];" : "=h"(v.h[0]) : "l"(p) : "memory");
    else
      asm volatile("ld.global.L1::evict_last.u16 %0, [%1];" : "=h"(v.h[0]) : "l"(p) : "memory");
  }
  return v;
}

// Sum of `v` over the kThreadsPerRow threads of a row (every thread of the CTA calls it; rows
// of one CTA are contiguous thread ranges). `scratch` holds a float per warp.
template <int kThreadsPerRow, int kRowsPerCta>
__device__ __forceinline__ float rmsnorm_row_sum(float v, float* scratch) {
  constexpr int kWarpWidth = kThreadsPerRow < 32 ? kThreadsPerRow : 32;
#pragma unroll
  for (int offset = kWarpWidth / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  if constexpr (kThreadsPerRow > 32) {
    constexpr int kWarpsPerRow = kThreadsPerRow / 32;
    const int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) scratch[warp] = v;
    __syncthreads();
    const float* row_partials = scratch + (warp / kWarpsPerRow) * kWarpsPerRow;
    v = 0;
#pragma unroll
    for (int w = 0; w < kWarpsPerRow; ++w) v += row_partials[w];
  }
  return v;
}

template <typename T, int kHidden, int kThreadsPerRow, int kRowsPerCta, int kVec, int kMode,
          bool kResidual>
__global__ void __launch_bounds__(kThreadsPerRow* kRowsPerCta) rmsnorm(const RmsnormParams params) {
  if (test_fault(params.y)) return;
  using W = RmsnormVec<kVec>;
  constexpr int kVecsPerRow = kHidden / kVec;
  constexpr int kItems = (kVecsPerRow + kThreadsPerRow - 1) / kThreadsPerRow;
  // Vectors a thread has in flight at once: its whole slice in registers mode, else four.
  constexpr int kBatch = kMode == 0 ? kItems : (kItems < 4 ? kItems : 4);
  static_assert(kHidden % kVec == 0, "the vector width divides the row");
  __shared__ float scratch[kThreadsPerRow * kRowsPerCta / 32 + 1];
  extern __shared__ __align__(16) unsigned char staged[];

  const int lane = threadIdx.x % kThreadsPerRow;
  const int row_in_cta = threadIdx.x / kThreadsPerRow;
  const long long row = (long long)blockIdx.x * kRowsPerCta + row_in_cta;
  const bool active = row < params.rows;
  const long long offset = (active ? row : 0) * (long long)kVecsPerRow;
  const W* x = static_cast<const W*>(params.x) + offset;
  const W* r = static_cast<const W*>(params.residual) + offset;
  W* sum_out = static_cast<W*>(params.residual_out) + offset;
  W* y = static_cast<W*>(params.y) + offset;
  const W* w = static_cast<const W*>(params.weight);
  W* stage = reinterpret_cast<W*>(staged) + row_in_cta * kVecsPerRow;

  // NOTE: every batch issues all of its loads before its first store: the stores (y, the sum)
  // may alias the loads as far as the compiler knows (in place residual), so a load after a
  // store waits for it and a thread would have one load in flight.
  auto valid = [=](int i) { return active && i * kThreadsPerRow + lane < kVecsPerRow; };
  auto index = [=](int i) { return i * kThreadsPerRow + lane; };
  auto sum_squares = [](const W& v) {
    float s = 0;
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const float f = rmsnorm_element<T, kVec>(v, e);
      s += f * f;
    }
    return s;
  };
  // Pass 1 over vectors [first, first + kBatch): x (+ r, the rounded sum written out) into
  // `v`, squares into ss.
  float ss = 0;
  auto pass1 = [&](int first, W(&v)[kBatch]) {
    W rv[kResidual ? kBatch : 1];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (!valid(first + b)) continue;
      v[b] = rmsnorm_load<true>(x + index(first + b));
      if constexpr (kResidual) rv[b] = rmsnorm_load<true>(r + index(first + b));
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (!valid(first + b)) continue;
      if constexpr (kResidual) {
        float f[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          f[e] = rmsnorm_element<T, kVec>(v[b], e) + rmsnorm_element<T, kVec>(rv[b], e);
        v[b] = rmsnorm_vec<T, kVec>(f);
        sum_out[index(first + b)] = v[b];
      }
      if constexpr (kMode == 1) stage[index(first + b)] = v[b];
      ss += sum_squares(v[b]);
    }
  };
  // Pass 2 over the same vectors: y = v · scale · w, the weights loaded before any store.
  auto pass2 = [&](int first, const W(&v)[kBatch], float scale) {
    W wv[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (valid(first + b)) wv[b] = rmsnorm_load<false>(w + index(first + b));
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (!valid(first + b)) continue;
      float f[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        f[e] = rmsnorm_element<T, kVec>(v[b], e) * scale * rmsnorm_element<T, kVec>(wv[b], e);
      y[index(first + b)] = rmsnorm_vec<T, kVec>(f);
    }
  };
  auto row_scale = [&] {
    return rsqrtf(rmsnorm_row_sum<kThreadsPerRow, kRowsPerCta>(ss, scratch) / kHidden + params.eps);
  };

  if constexpr (kMode == 0) {
    W v[kBatch];  // kBatch == kItems: the thread's whole slice of the row
    pass1(0, v);
    pass2(0, v, row_scale());
  } else {
    for (int first = 0; first < kItems; first += kBatch) {
      W v[kBatch];
      pass1(first, v);
    }
    const float scale = row_scale();
    // Each thread reads back only what it wrote (the same indices), so the staged row and the
    // written sum need no barrier.
    const W* again = kMode == 1 ? stage : (kResidual ? sum_out : x);
    for (int first = 0; first < kItems; first += kBatch) {
      W v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (valid(first + b)) v[b] = again[index(first + b)];
      pass2(first, v, scale);
    }
  }
}

}  // namespace kt
