// The sm90 GEMM's copied operand: nn's K x N B whose row stride is no multiple of 16 bytes, which
// TMA cannot address, copied by the producer warpgroup's 128 threads straight from the caller's
// tensor into a stage's 128B-swizzled atoms, with cp.async of kMnCopyBytes (4 or 8) each. Each
// thread's copies of a stage arrive on its full barrier once they complete (one of the barrier's
// 1 + 128 arrivals); the consumers order them before wgmma's reads (the async proxy) with a proxy
// fence after their wait. No copy of the operand, and no kernel to make one, is needed.
#pragma once

#include "kerntune/common/ptx_sm80.cuh"
#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_traits.cuh"

namespace kt {
namespace sm90 {

// The copied operand in global memory: K rows `ld` elements apart, `cols` columns (the kernel's
// N for its B, or swapped its M for its A).
struct MnCopySource {
  const unsigned short* base;
  long long ld;
  int cols;
  int k;
};

template <typename K>
__device__ __forceinline__ MnCopySource mn_copy_source(const GemmParams& p) {
  if constexpr (K::kACopied)
    return {static_cast<const unsigned short*>(p.a), p.lda, p.m, p.k};
  else
    return {static_cast<const unsigned short*>(p.b), p.ldb, p.n, p.k};
}

// Producer thread `thread` (0 to 127) copies its part of K rows [k, k + kTileK) of the columns
// [col0, col0 + 64 atoms) into `atoms` atoms from `dst` on (kMnAtomBytes apart; a K row is one
// 128-byte swizzle row of an atom, its 16-byte units exchanged by the row's index mod 8, as TMA's
// 128B swizzle lays a box {64, kTileK} out). Chunks past K or past the columns are zero-filled
// without a read. The host guarantees the base, ld and cols in whole kMnCopyBytes granules.
template <typename K>
__device__ __forceinline__ void copy_mn_atoms(const MnCopySource& src, unsigned int dst, int col0,
                                              int atoms, int k, int thread) {
  constexpr int kChunk = K::kMnCopyBytes;
  constexpr int kChunksPerRow = kRowBytes / kChunk;  // 32 or 16 threads a row
  constexpr int kRowsPerPass = 128 / kChunksPerRow;  // 4 or 8 rows a pass of the warpgroup
  constexpr int kPasses = K::kTileK / kRowsPerPass;
  const int chunk = thread % kChunksPerRow;
  const int first_row = thread / kChunksPerRow;  // < kRowsPerPass <= 8: its index mod 8
  const int unit = chunk * kChunk / 16;
  const int within = chunk * kChunk % 16;
  // Rows first_row + kRowsPerPass i: their index mod 8 alternates between two values (4 rows a
  // pass) or stays (8).
  const unsigned int offset[2] = {
      unsigned(first_row * 128 + ((unit ^ first_row) << 4) + within),
      unsigned(first_row * 128 + ((unit ^ ((first_row + kRowsPerPass) % 8)) << 4) + within)};
  const int rows_left = src.k - k - first_row;  // rows of this thread's first pass on in K
  const long long step = kRowsPerPass * src.ld;
#pragma unroll 1
  for (int j = 0; j < atoms; ++j) {
    const int col = col0 + 64 * j + chunk * (kChunk / 2);
    const bool col_in = col < src.cols;
    const unsigned short* from = src.base + (k + first_row) * src.ld + col;
    const unsigned int atom = dst + j * K::kMnAtomBytes;
#pragma unroll 8
    for (int i = 0; i < kPasses; ++i) {
      const bool in = col_in && kRowsPerPass * i < rows_left;
      const unsigned int to = atom + i * kRowsPerPass * 128 + offset[i % 2];
      if constexpr (kChunk == 4)
        cp_async_4(to, in ? from : src.base, in ? 4u : 0u);
      else
        cp_async_8(to, in ? from : src.base, in ? 8u : 0u);
      from += step;
    }
  }
}

}  // namespace sm90
}  // namespace kt
