// The sm90 GEMM's direct stores of C from wgmma accumulators: masked pairs, plain or transposed
// (swap-AB), used by the direct epilogue and by every split-K reduction.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm90.cuh"

namespace kt {
namespace sm90 {

// The kernel's element (row, col) of C: C[row][col], or with kSwapAB, where the kernel computes
// C^T = B·A^T (its rows are C's columns), C[col][row]. ldc: C's row stride.
template <bool kSwapAB, typename T>
__device__ __forceinline__ T* element(T* c, long long ldc, int row, int col) {
  return kSwapAB ? c + col * ldc + row : c + row * ldc + col;
}

// Stores the kernel's pair (row, col), (row, col + 1), each if col + {0, 1} < n; `at` is the
// kernel's element (row, 0). Not transposed: one access when `aligned` (store_pair_masked).
// Transposed: the two lie ldc apart in C, one store each.
template <bool kSwapAB, typename T>
__device__ __forceinline__ void store_pair(T* at, long long ldc, int col, int n, float lo, float hi,
                                           bool aligned) {
  if constexpr (kSwapAB) {
    if (col < n) store_one(at + col * ldc, lo);
    if (col + 1 < n) store_one(at + (col + 1) * ldc, hi);
  } else {
    store_pair_masked(at, col, n, lo, hi, aligned);
  }
}

// Lanes 2q and 2q + 1 of each quad trade 16-bit pairs: the even lane keeps `a` and takes its
// partner's `a`, the odd lane keeps `b` and takes its partner's `b`, so that each holds four
// adjacent elements, returned low pair first. Every lane of the warp calls it.
__device__ __forceinline__ uint2 trade_pairs(unsigned int a, unsigned int b, bool odd) {
  const unsigned int traded = __shfl_xor_sync(0xffffffffu, odd ? a : b, 1);
  return odd ? make_uint2(traded, b) : make_uint2(a, traded);
}

// Four adjacent 16-bit elements at `at`, element e stored where first + e < limit: one 8-byte
// store when `aligned` (at 8-byte aligned), two 4-byte ones when `pairs`, else one by one.
__device__ __forceinline__ void store_four(unsigned short* at, int first, int limit, uint2 four,
                                           bool aligned, bool pairs) {
  if (aligned && first + 3 < limit) {
    *reinterpret_cast<uint2*>(at) = four;
  } else if (pairs && first + 3 < limit) {
    reinterpret_cast<unsigned int*>(at)[0] = four.x;
    reinterpret_cast<unsigned int*>(at)[1] = four.y;
  } else {
    const unsigned int words[2] = {four.x, four.y};
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (first + e < limit) at[e] = static_cast<unsigned short>(words[e / 2] >> (16 * (e % 2)));
  }
}

// store_accumulators for swap-AB with 16-bit C: each 8x8 block of accumulators (8 of the
// kernel's rows, which are C's columns, by 8 of its columns) is transposed across the warp
// (movmatrix_trans), so that a lane holds two adjacent elements of one row of C; the two blocks
// of a 16-row slice (half 0 and 1) then trade pairs between lanes 2q and 2q + 1 of each quad, so
// that a lane holds four adjacent elements (8 bytes) and the quad a row's 16 (a whole 32-byte
// sector): each warp store writes 8 rows of C one sector each, every sector in one request.
// C whose rows are only 4-byte aligned stores the four as two pairs; the edges element by
// element. Every lane of the warp calls it.
template <typename T, int kMI, int kAccs>
__device__ __forceinline__ void store_accumulators_transposed(T* c, long long ldc, int m, int n,
                                                              int row0, int col0,
                                                              const float (&acc)[kMI][kAccs]) {
  static_assert(sizeof(T) == 2, "transposed 16-bit pairs");
  const bool aligned = quads_aligned(c, ldc);
  const bool pairs = pairs_aligned(c, ldc);
  const int lane = threadIdx.x % 32;
  const int quad_lane = lane % 4;
  const bool odd = quad_lane % 2 != 0;
  // After the trade: this lane's first kernel row (C's column) of its four, and its kernel
  // column (C's row). The warp's first kernel row is row0 - lane / 4.
  const int row = row0 - lane / 4 + (odd ? 8 : 0) + 4 * (quad_lane / 2);
  const int col = col0 - 2 * quad_lane + lane / 4;
  unsigned short* out = reinterpret_cast<unsigned short*>(c);
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
    const int r = row + mi * 64;
#pragma unroll
    for (int j = 0; j < kAccs / 4; ++j) {
      const unsigned int half0 =
          movmatrix_trans(DTypeTraits<T>::pack2(acc[mi][4 * j], acc[mi][4 * j + 1]));
      const unsigned int half1 =
          movmatrix_trans(DTypeTraits<T>::pack2(acc[mi][4 * j + 2], acc[mi][4 * j + 3]));
      // Even lanes keep half 0's pair and take their partner's; odd lanes half 1's.
      const uint2 four = trade_pairs(half0, half1, odd);
      const int cc = col + j * 8;
      if (cc >= n || r >= m) continue;
      store_four(out + cc * ldc + r, r, m, four, aligned, pairs);
    }
  }
}

// store_accumulators for 16-bit C in the kernel's orientation: the pairs of two adjacent 8-column
// blocks (j, j + 1) trade between lanes 2q and 2q + 1 of each quad, so that a lane holds four
// adjacent elements (8 bytes) and the quad a row's 16 (a whole 32-byte sector): each warp store
// writes 8 rows of C one sector each. An odd last block stores pairs. C whose rows are only
// 4-byte aligned stores the four as two pairs; the edges element by element. Every lane of the
// warp calls it (the trade is a warp shuffle).
template <typename T, int kMI, int kAccs>
__device__ __forceinline__ void store_accumulators_sectors(T* c, long long ldc, int m, int n,
                                                           int row0, int col0,
                                                           const float (&acc)[kMI][kAccs]) {
  static_assert(sizeof(T) == 2, "16-bit pairs");
  constexpr int kBlocks = kAccs / 4;
  const bool aligned = quads_aligned(c, ldc);
  const bool pairs = pairs_aligned(c, ldc);
  const int lane = threadIdx.x % 32;
  const bool odd = lane % 2 != 0;
  // After the trade: this lane's first column of its four (col0 is the block's + 2 (lane % 4)).
  const int col = col0 - 2 * (lane % 4) + 4 * ((lane % 4) / 2) + (odd ? 8 : 0);
  unsigned short* out = reinterpret_cast<unsigned short*>(c);
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + mi * 64 + half * 8;
      unsigned short* c_row = out + row * ldc;
#pragma unroll
      for (int j = 0; j + 1 < kBlocks; j += 2) {
        const unsigned int block0 =
            DTypeTraits<T>::pack2(acc[mi][4 * j + 2 * half], acc[mi][4 * j + 2 * half + 1]);
        const unsigned int block1 =
            DTypeTraits<T>::pack2(acc[mi][4 * j + 4 + 2 * half], acc[mi][4 * j + 4 + 2 * half + 1]);
        // Even lanes keep block j's pair and take their partner's; odd lanes block j + 1's.
        const uint2 four = trade_pairs(block0, block1, odd);
        const int cc = col + j * 8;
        if (row >= m || cc >= n) continue;
        store_four(c_row + cc, cc, n, four, aligned, pairs);
      }
      if constexpr (kBlocks % 2 != 0) {
        if (row < m) {
          constexpr int j = kBlocks - 1;
          store_pair_masked(reinterpret_cast<T*>(c_row), col0 + j * 8, n, acc[mi][4 * j + 2 * half],
                            acc[mi][4 * j + 2 * half + 1], pairs);
        }
      }
    }
  }
}

// Writes a consumer's kMI x (64 x kN) wgmma accumulator tiles to c (leading dimension ldc),
// masked to m x n (element<kSwapAB> places them). row0, col0: this thread's first element,
// (16 warp + lane / 4, 2 (lane % 4)) from the consumer's corner; tile mi starts 64 mi rows lower.
// Pairs go out as one access when c and ldc allow it (transposed: store_accumulators_transposed
// for 16-bit C, one store an element for FP32).
template <bool kSwapAB, typename T, int kMI, int kAccs>
__device__ __forceinline__ void store_accumulators(T* c, long long ldc, int m, int n, int row0,
                                                   int col0, const float (&acc)[kMI][kAccs]) {
  if constexpr (sizeof(T) == 2) {
    if constexpr (kSwapAB)
      store_accumulators_transposed(c, ldc, m, n, row0, col0, acc);
    else
      store_accumulators_sectors(c, ldc, m, n, row0, col0, acc);
    return;
  }
  const bool aligned = pairs_aligned(c, ldc);
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + mi * 64 + half * 8;
      if (row >= m) continue;
      T* c_row = element<kSwapAB>(c, ldc, row, 0);
#pragma unroll
      for (int j = 0; j < kAccs / 4; ++j) {
        const int col = col0 + j * 8;
        const float lo = acc[mi][4 * j + 2 * half];
        const float hi = acc[mi][4 * j + 2 * half + 1];
        store_pair<kSwapAB>(c_row, ldc, col, n, lo, hi, aligned);
      }
    }
  }
}

}  // namespace sm90
}  // namespace kt
