// kt::rmsnorm: y = x · rsqrt(mean(x²) + eps) · w per row, optionally after x = x + r (the sum
// rounded to T, written to residual_out and normalized as rounded, as an add then a norm would).
// FP32 accumulation. kThreadsPerRow threads share a row, each loading kVec elements at a time
// (vector loads of 2·kVec bytes); a CTA holds kRowsPerCta rows. kMode 0 keeps each thread's slice
// of the row in registers between the sum of squares and the scaling, 1 stages it in dynamic
// shared memory, 2 reads it again from global memory (L2) for the scaling. Any kHidden: rows that
// do not start on a vector boundary are peeled (their ends one element a lane), so every row
// moves aligned vectors.
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
  using E = unsigned short;  // one element's bits
  // A row whose start is not a multiple of kVec elements (kHidden not one) is peeled: its
  // first `head` elements and last `tail` ones are single elements, one a lane, and the vectors
  // between them start aligned.
  constexpr bool kPeel = kHidden % kVec != 0;
  constexpr int kVecsPerRow = kHidden / kVec;
  constexpr int kItems = (kVecsPerRow + kThreadsPerRow - 1) / kThreadsPerRow;
  // Vectors a thread has in flight at once: its whole slice in registers mode, else four.
  constexpr int kBatch = kMode == 0 ? kItems : (kItems < 4 ? kItems : 4);
  static_assert(!kPeel || kThreadsPerRow >= 2 * (kVec - 1), "a lane for every peeled element");
  __shared__ float scratch[kThreadsPerRow * kRowsPerCta / 32 + 1];
  extern __shared__ __align__(16) unsigned char staged[];

  const int lane = threadIdx.x % kThreadsPerRow;
  const int row_in_cta = threadIdx.x / kThreadsPerRow;
  const long long row = (long long)blockIdx.x * kRowsPerCta + row_in_cta;
  const bool active = row < params.rows;
  const long long row_start = (active ? row : 0) * (long long)kHidden;
  int head = 0, body = kVecsPerRow;
  if constexpr (kPeel) {
    head = int((kVec - row_start % kVec) % kVec);
    if (head > kHidden) head = kHidden;
    body = (kHidden - head) / kVec;
  }
  const E* xe = static_cast<const E*>(params.x) + row_start;
  const E* re = static_cast<const E*>(params.residual) + row_start;
  E* sum_e = static_cast<E*>(params.residual_out) + row_start;
  E* ye = static_cast<E*>(params.y) + row_start;
  const E* we = static_cast<const E*>(params.weight);
  const W* x = reinterpret_cast<const W*>(xe + head);
  const W* r = reinterpret_cast<const W*>(re + head);
  W* sum_out = reinterpret_cast<W*>(sum_e + head);
  W* y = reinterpret_cast<W*>(ye + head);
  const W* w = reinterpret_cast<const W*>(we);  // aligned rows only (head == 0)
  W* stage = reinterpret_cast<W*>(staged) + row_in_cta * kVecsPerRow;

  // The peeled element this lane holds (kPeel): one of the head, else one of the tail.
  const int tail = kHidden - head - body * kVec;
  const int peeled = lane < head ? lane : head + body * kVec + (lane - head);
  const bool has_peeled = kPeel && active && lane < head + tail;
  float peeled_value = 0;

  // NOTE: every batch issues all of its loads before its first store: the stores (y, the sum)
  // may alias the loads as far as the compiler knows (in place residual), so a load after a
  // store waits for it and a thread would have one load in flight.
  auto valid = [=](int i) { return active && i * kThreadsPerRow + lane < body; };
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
      v[b] = x[index(first + b)];
      if constexpr (kResidual) rv[b] = r[index(first + b)];
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
      if (valid(first + b)) {
        if (!kPeel || head == 0) {
          wv[b] = w[index(first + b)];
        } else {
          // A peeled row's weights are not vector-aligned: one 2-byte load an element (the
          // model charges their L1 wavefronts, which makes wide vectors lose on such rows).
#pragma unroll
          for (int e = 0; e < kVec; ++e) wv[b].h[e] = we[head + index(first + b) * kVec + e];
        }
      }
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
  // The peeled element through both passes, beside the vectors.
  auto peel1 = [&] {
    if (!has_peeled) return;
    float f = DTypeTraits<T>::to_float(T{xe[peeled]});
    if constexpr (kResidual) {
      const T sum = DTypeTraits<T>::from_float(f + DTypeTraits<T>::to_float(T{re[peeled]}));
      sum_e[peeled] = sum.bits;
      f = DTypeTraits<T>::to_float(sum);
    }
    peeled_value = f;
    ss += f * f;
  };
  auto peel2 = [&](float scale) {
    if (!has_peeled) return;
    ye[peeled] =
        DTypeTraits<T>::from_float(peeled_value * scale * DTypeTraits<T>::to_float(T{we[peeled]}))
            .bits;
  };
  auto row_scale = [&] {
    return rsqrtf(rmsnorm_row_sum<kThreadsPerRow, kRowsPerCta>(ss, scratch) / kHidden + params.eps);
  };

  if constexpr (kMode == 0) {
    W v[kBatch];  // kBatch == kItems: the thread's whole slice of the row
    pass1(0, v);
    if constexpr (kPeel) peel1();
    const float scale = row_scale();
    pass2(0, v, scale);
    if constexpr (kPeel) peel2(scale);
  } else {
    for (int first = 0; first < kItems; first += kBatch) {
      W v[kBatch];
      pass1(first, v);
    }
    if constexpr (kPeel) peel1();
    const float scale = row_scale();
    if constexpr (kPeel) peel2(scale);
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
