// kt::rmsnorm: y = x · rsqrt(mean(x²) + eps) · w per row, optionally after x = x + r (the sum
// rounded to T, written to residual_out and normalized as rounded, as an add then a norm would).
// FP32 accumulation. kThreadsPerRow threads share a row, each loading kVec elements at a time
// (vector loads of 2·kVec bytes); a CTA holds kRowsPerCta rows. kMode 0 keeps each thread's slice
// of the row in registers between the sum of squares and the scaling, 1 stages it in dynamic
// shared memory, 2 reads it again from global memory (L1 or L2, by cache hints) for the scaling.
// Any kHidden: rows that do not start on a vector boundary are peeled (their ends one element a
// lane), so every row moves aligned vectors. kt::rmsnorm_persistent is kMode 0 over a resident grid
// that loops over the rows, loading a CTA's next rows while it reduces and stores the current ones.
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

// The two-pass mode's loads of x (and r, or the sum): the first read marks its lines evict-last
// in L1 and L2 so that the second read, one vector at a time, hits L1 instead of waiting on L2;
// the second read marks them evict-first, their last use. 4- and 8-wide vectors carry the hints,
// narrower ones load plainly. "memory": a second read of the sum must follow its store.
template <bool kKeep, int N>
__device__ __forceinline__ RmsnormVec<N> rmsnorm_load_hinted(const RmsnormVec<N>* p) {
  if constexpr (N != 4 && N != 8) {
    return *p;
  } else {
    unsigned long long policy;
    if constexpr (kKeep)
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    else
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    RmsnormVec<N> v;
    unsigned* u = reinterpret_cast<unsigned*>(&v);
    if constexpr (N == 8 && kKeep)
      asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                   : "=r"(u[0]), "=r"(u[1]), "=r"(u[2]), "=r"(u[3])
                   : "l"(p), "l"(policy)
                   : "memory");
    else if constexpr (N == 8)
      asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                   : "=r"(u[0]), "=r"(u[1]), "=r"(u[2]), "=r"(u[3])
                   : "l"(p), "l"(policy)
                   : "memory");
    else if constexpr (kKeep)
      asm volatile("ld.global.L1::evict_last.L2::cache_hint.v2.u32 {%0,%1}, [%2], %3;"
                   : "=r"(u[0]), "=r"(u[1])
                   : "l"(p), "l"(policy)
                   : "memory");
    else
      asm volatile("ld.global.L1::evict_first.L2::cache_hint.v2.u32 {%0,%1}, [%2], %3;"
                   : "=r"(u[0]), "=r"(u[1])
                   : "l"(p), "l"(policy)
                   : "memory");
    return v;
  }
}

// The residual add, x + r, rounded to T (the sum is written and normalized as rounded).
template <typename T, int N>
__device__ __forceinline__ RmsnormVec<N> rmsnorm_add(const RmsnormVec<N>& x,
                                                     const RmsnormVec<N>& r) {
  float f[N];
#pragma unroll
  for (int e = 0; e < N; ++e) f[e] = rmsnorm_element<T, N>(x, e) + rmsnorm_element<T, N>(r, e);
  return rmsnorm_vec<T, N>(f);
}

// The sum of the squares of v's elements.
template <typename T, int N>
__device__ __forceinline__ float rmsnorm_sum_squares(const RmsnormVec<N>& v) {
  float s = 0;
#pragma unroll
  for (int e = 0; e < N; ++e) {
    const float f = rmsnorm_element<T, N>(v, e);
    s += f * f;
  }
  return s;
}

// The output, v · scale · w, rounded to T.
template <typename T, int N>
__device__ __forceinline__ RmsnormVec<N> rmsnorm_scaled(const RmsnormVec<N>& v, float scale,
                                                        const RmsnormVec<N>& w) {
  float f[N];
#pragma unroll
  for (int e = 0; e < N; ++e)
    f[e] = rmsnorm_element<T, N>(v, e) * scale * rmsnorm_element<T, N>(w, e);
  return rmsnorm_vec<T, N>(f);
}
template <typename T>
__device__ __forceinline__ unsigned short rmsnorm_scaled(float v, float scale, unsigned short w) {
  return DTypeTraits<T>::from_float(v * scale * DTypeTraits<T>::to_float(T{w})).bits;
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

// One thread's view of one row: where its vectors and its peeled element lie. A row at or past
// `rows` is inactive (valid() and has_peeled() are false) and points at row 0. A row whose start
// is not a multiple of kVec elements (kHidden not one) is peeled: its first `head` elements and
// last `tail` ones are single elements, one a lane, and the `body` vectors between them start
// aligned.
template <int kHidden, int kThreadsPerRow, int kVec>
struct RmsnormRow {
  using W = RmsnormVec<kVec>;
  using E = unsigned short;  // one element's bits
  // NOTE: enumerators, not static constexpr members, which NVRTC emits as module globals.
  enum : int {
    kPeel = kHidden % kVec != 0,
    kVecsPerRow = kHidden / kVec,
    kItems = (kHidden / kVec + kThreadsPerRow - 1) / kThreadsPerRow,
  };
  static_assert(!kPeel || kThreadsPerRow >= 2 * (kVec - 1), "a lane for every peeled element");

  bool active;
  int lane, head, body;
  long long start;  // the row's first element

  __device__ __forceinline__ RmsnormRow(long long row, long long rows, int lane_in_row)
      : active(row < rows), lane(lane_in_row), head(0), body(kVecsPerRow) {
    start = (active ? row : 0) * (long long)kHidden;
    if constexpr (kPeel) {
      head = int((kVec - start % kVec) % kVec);
      if (head > kHidden) head = kHidden;
      body = (kHidden - head) / kVec;
    }
  }
  // The thread's i-th vector of the body, and whether the row has it.
  __device__ __forceinline__ int index(int i) const { return i * kThreadsPerRow + lane; }
  __device__ __forceinline__ bool valid(int i) const { return active && index(i) < body; }
  // The row's elements and its body's vectors in a rows x kHidden tensor at `base`.
  __device__ __forceinline__ E* elements(const void* base) const {
    return static_cast<E*>(const_cast<void*>(base)) + start;
  }
  __device__ __forceinline__ W* vectors(const void* base) const {
    return reinterpret_cast<W*>(elements(base) + head);
  }
  // Loads into `w` the weights (`we`: hidden elements) of the thread's i-th vector. A peeled
  // row's are not vector-aligned: one 2-byte load an element (the model charges their L1
  // wavefronts, which makes wide vectors lose on such rows).
  __device__ __forceinline__ void load_weights(const E* we, int i, W& w) const {
    if (!kPeel || head == 0) {
      w = reinterpret_cast<const W*>(we)[index(i)];
    } else {
#pragma unroll
      for (int e = 0; e < kVec; ++e) w.h[e] = we[head + index(i) * kVec + e];
    }
  }
  // The peeled element this lane holds (kPeel): one of the head, else one of the tail.
  __device__ __forceinline__ int peeled() const {
    return lane < head ? lane : head + body * kVec + (lane - head);
  }
  __device__ __forceinline__ bool has_peeled() const {
    return kPeel && active && lane < head + (kHidden - head - body * kVec);
  }
};

template <typename T, int kHidden, int kThreadsPerRow, int kRowsPerCta, int kVec, int kMode,
          bool kResidual>
__global__ void __launch_bounds__(kThreadsPerRow* kRowsPerCta) rmsnorm(const RmsnormParams params) {
  if (test_fault(params.y)) return;
  using Row = RmsnormRow<kHidden, kThreadsPerRow, kVec>;
  using W = typename Row::W;
  using E = typename Row::E;
  constexpr bool kPeel = Row::kPeel != 0;
  constexpr int kVecsPerRow = Row::kVecsPerRow;
  constexpr int kItems = Row::kItems;
  // Vectors a thread has in flight at once: its whole slice in registers mode; up to eight in
  // the two-pass mode's first pass, which keeps only their sum of squares (its second pass reads
  // one vector at a time, from L1 or L2); four in the shared mode, which stages them.
  constexpr int kBatch = kMode == 0   ? kItems
                         : kMode == 2 ? (kItems < 8 ? kItems : 8)
                                      : (kItems < 4 ? kItems : 4);
  __shared__ float scratch[kThreadsPerRow * kRowsPerCta / 32 + 1];
  extern __shared__ __align__(16) unsigned char staged[];

  const int lane = threadIdx.x % kThreadsPerRow;
  const int row_in_cta = threadIdx.x / kThreadsPerRow;
  const Row row((long long)blockIdx.x * kRowsPerCta + row_in_cta, params.rows, lane);
  const int head = row.head;
  const E* xe = row.elements(params.x);
  const E* re = row.elements(params.residual);
  E* sum_e = row.elements(params.residual_out);
  E* ye = row.elements(params.y);
  const E* we = static_cast<const E*>(params.weight);
  const W* x = row.vectors(params.x);
  const W* r = row.vectors(params.residual);
  W* sum_out = row.vectors(params.residual_out);
  W* y = row.vectors(params.y);
  W* stage = reinterpret_cast<W*>(staged) + row_in_cta * kVecsPerRow;
  const int peeled = row.peeled();
  const bool has_peeled = row.has_peeled();
  float peeled_value = 0;

  // NOTE: every batch issues all of its loads before its first store: the stores (y, the sum)
  // may alias the loads as far as the compiler knows (in place residual), so a load after a
  // store waits for it and a thread would have one load in flight.
  auto valid = [&](int i) { return row.valid(i); };
  auto index = [&](int i) { return row.index(i); };
  // Pass 1 over vectors [first, first + kBatch): x (+ r, the rounded sum written out) into
  // `v`, squares into ss.
  float ss = 0;
  auto pass1 = [&](int first, W(&v)[kBatch]) {
    W rv[kResidual ? kBatch : 1];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (!valid(first + b)) continue;
      if constexpr (kMode == 2) {
        v[b] = rmsnorm_load_hinted<true>(&x[index(first + b)]);
        if constexpr (kResidual) rv[b] = rmsnorm_load_hinted<true>(&r[index(first + b)]);
      } else {
        v[b] = x[index(first + b)];
        if constexpr (kResidual) rv[b] = r[index(first + b)];
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (!valid(first + b)) continue;
      if constexpr (kResidual) {
        v[b] = rmsnorm_add<T, kVec>(v[b], rv[b]);
        sum_out[index(first + b)] = v[b];
      }
      if constexpr (kMode == 1) stage[index(first + b)] = v[b];
      ss += rmsnorm_sum_squares<T, kVec>(v[b]);
    }
  };
  // Pass 2 over the same vectors: y = v · scale · w, the weights loaded before any store.
  auto pass2 = [&](int first, const W(&v)[kBatch], float scale) {
    W wv[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (valid(first + b)) row.load_weights(we, first + b, wv[b]);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (valid(first + b)) y[index(first + b)] = rmsnorm_scaled<T, kVec>(v[b], scale, wv[b]);
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
    ye[peeled] = rmsnorm_scaled<T>(peeled_value, scale, we[peeled]);
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
    if constexpr (kMode == 2) {
      // One vector at a time: few registers, so that more threads stay resident to keep the
      // first pass's loads in flight; the second read is a cache hit.
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (!valid(i)) continue;
        W w;
        row.load_weights(we, i, w);
        y[index(i)] =
            rmsnorm_scaled<T, kVec>(rmsnorm_load_hinted<false>(&again[index(i)]), scale, w);
      }
    } else {
      for (int first = 0; first < kItems; first += kBatch) {
        W v[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
          if (valid(first + b)) v[b] = again[index(first + b)];
        pass2(first, v, scale);
      }
    }
  }
}

// kt::rmsnorm_persistent: kt::rmsnorm's registers mode over a grid the launcher sizes to what is
// resident at once (any grid is correct). CTA b takes the groups of kRowsPerCta rows b, b + grid,
// b + 2·grid, ... (a grid stride: at any moment the CTAs stream one contiguous window of the
// tensor, and no CTA has more than one group more than another). Software-pipelined: a thread
// issues its next row's loads into a second register buffer before it adds, reduces and stores the
// current row, so loads stay in flight while rows are reduced and no CTA slot turns over.
// NOTE: the next row's loads go before the current row's stores, which may alias them as far as
// the compiler knows (residual_out may be residual): a CTA's rows are distinct rows no other CTA
// touches, so the next row's x and r are never addresses the current row stores to.
// NOTE: the launch bounds name a minimum of one CTA an SM: with the thread count alone, ptxas
// (CUDA 13) held 512-thread instances to 64 registers and spilled.
template <typename T, int kHidden, int kThreadsPerRow, int kRowsPerCta, int kVec, bool kResidual>
__global__ void __launch_bounds__(kThreadsPerRow* kRowsPerCta, 1)
    rmsnorm_persistent(const RmsnormParams params) {
  if (test_fault(params.y)) return;
  using Row = RmsnormRow<kHidden, kThreadsPerRow, kVec>;
  using W = typename Row::W;
  using E = typename Row::E;
  constexpr int kItems = Row::kItems;
  // Two sets of partials, alternating by row: a warp writes row k + 1's partial while a slower
  // warp may still read row k's; row k + 2 reuses row k's set only after every warp passed row
  // k + 1's barrier, so one barrier a row suffices.
  constexpr int kPartials = kThreadsPerRow * kRowsPerCta / 32 + 1;
  __shared__ float scratch[2 * kPartials];

  const int lane = threadIdx.x % kThreadsPerRow;
  const int row_in_cta = threadIdx.x / kThreadsPerRow;
  const long long group_stride = (long long)gridDim.x * kRowsPerCta;

  // A row's inputs: its x and r vectors and its peeled element's.
  struct Inputs {
    W x[kItems];
    W r[kResidual ? kItems : 1];
    E peeled_x, peeled_r;
  };
  auto load = [&](const Row& row, Inputs& in) {
    const W* x = row.vectors(params.x);
    const W* r = row.vectors(params.residual);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (!row.valid(i)) continue;
      in.x[i] = x[row.index(i)];
      if constexpr (kResidual) in.r[i] = r[row.index(i)];
    }
    if (!row.has_peeled()) return;
    in.peeled_x = row.elements(params.x)[row.peeled()];
    if constexpr (kResidual) in.peeled_r = row.elements(params.residual)[row.peeled()];
  };
  // The weights of a row's vectors and of its peeled element: the same for every row unless
  // rows are peeled (their vectors then start at the row's own offset).
  const E* we = static_cast<const E*>(params.weight);
  W wv[kItems];
  E peeled_w;
  auto load_weights = [&](const Row& row) {
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (row.valid(i)) row.load_weights(we, i, wv[i]);
    if (row.has_peeled()) peeled_w = we[row.peeled()];
  };

  long long group = (long long)blockIdx.x * kRowsPerCta;
  Row row(group + row_in_cta, params.rows, lane);
  Inputs in;
  load(row, in);
  // Unpeeled, a later row of this thread uses the vectors its first row does, or none.
  if constexpr (Row::kPeel == 0) load_weights(row);
  for (int parity = 0; group < params.rows; group += group_stride, parity ^= 1) {
    const Row next(group + group_stride + row_in_cta, params.rows, lane);
    Inputs ahead;
    load(next, ahead);
    if constexpr (Row::kPeel != 0) load_weights(row);

    float ss = 0;
    W* sum_out = row.vectors(params.residual_out);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (!row.valid(i)) continue;
      if constexpr (kResidual) {
        in.x[i] = rmsnorm_add<T, kVec>(in.x[i], in.r[i]);
        sum_out[row.index(i)] = in.x[i];
      }
      ss += rmsnorm_sum_squares<T, kVec>(in.x[i]);
    }
    float peeled_value = 0;
    if (row.has_peeled()) {
      peeled_value = DTypeTraits<T>::to_float(T{in.peeled_x});
      if constexpr (kResidual) {
        const T sum =
            DTypeTraits<T>::from_float(peeled_value + DTypeTraits<T>::to_float(T{in.peeled_r}));
        row.elements(params.residual_out)[row.peeled()] = sum.bits;
        peeled_value = DTypeTraits<T>::to_float(sum);
      }
      ss += peeled_value * peeled_value;
    }
    const float scale = rsqrtf(
        rmsnorm_row_sum<kThreadsPerRow, kRowsPerCta>(ss, scratch + parity * kPartials) / kHidden +
        params.eps);

    W* y = row.vectors(params.y);
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (row.valid(i)) y[row.index(i)] = rmsnorm_scaled<T, kVec>(in.x[i], scale, wv[i]);
    if (row.has_peeled())
      row.elements(params.y)[row.peeled()] = rmsnorm_scaled<T>(peeled_value, scale, peeled_w);
    row = next;
    in = ahead;
  }
}

}  // namespace kt
