// Staging wgmma accumulators in shared memory for a TMA store: one column slab of a warpgroup's
// FP32 accumulator tiles, converted to the output type and laid out as a TMA box: 128 bytes wide
// in the 128B swizzle, or any multiple of 16 bytes wide, row-major and unswizzled. Used by the
// GEMM (sm90) and attention (fa3) epilogues.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm90.cuh"

namespace kt {
namespace sm90 {

// Writes column slab `slab` (kRowBytes of the output type wide) of a consumer's kMI x (64 x kN)
// accumulator tiles into the shared buffer `slot`.
// kRowBytes == 128: as the TMA 128B swizzle lays out a {128 B, rows} box: row r at r * 128, its
// 16-byte chunk c at chunk c ^ (r % 8) (`slot` is 1024-byte aligned). 16-bit outputs: a slab is
// 64 columns = 8 n8 blocks, written by stmatrix (each 8-row x 16-byte matrix row lands in 8
// distinct chunks: no bank conflict). FP32: 32 columns = 4 n8 blocks, 8-byte stores.
// Otherwise (a multiple of 16 bytes): row r at r * kRowBytes, unswizzled, each thread's pair of
// elements stored on its own (4 or 8 bytes). 144-byte rows (72 16-bit columns) spread a warp's
// 8 rows x 4 pairs over all 32 banks; 32- and 288-byte rows conflict two ways.
template <typename TOut, int kRowBytes = 128, int kMI, int kAccs>
__device__ __forceinline__ void stage_slab(unsigned int slot, const float (&acc)[kMI][kAccs],
                                           int slab, int warp, int lane) {
  static_assert(kRowBytes % 16 == 0, "TMA boxes are whole 16-byte chunks wide");
  if constexpr (kRowBytes != 128) {
    constexpr int kBlocks = kRowBytes / (8 * int(sizeof(TOut)));  // n8 blocks of a slab
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
      for (int b = 0; b < kBlocks; ++b) {
        const int j = kBlocks * slab + b;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = mi * 64 + 16 * warp + 8 * half + lane / 4;
          const unsigned int addr =
              slot + row * kRowBytes + (8 * b + 2 * (lane % 4)) * int(sizeof(TOut));
          const float lo = acc[mi][4 * j + 2 * half], hi = acc[mi][4 * j + 2 * half + 1];
          if constexpr (sizeof(TOut) == 2) {
            st_shared_4(addr, DTypeTraits<TOut>::pack2(lo, hi));
          } else {
            st_shared_v2f32(addr, lo, hi);
          }
        }
      }
    }
  } else if constexpr (sizeof(TOut) == 2) {
    const int matrix = lane / 8;  // the matrix whose row this lane addresses
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int j = 8 * slab + 2 * q;  // n8 blocks j and j + 1
        const int row = mi * 64 + 16 * warp + 8 * (matrix & 1) + (lane & 7);
        const int chunk = 2 * q + (matrix >> 1);
        const unsigned int addr = slot + row * 128 + ((chunk ^ (lane & 7)) << 4);
        stmatrix_x4(addr, DTypeTraits<TOut>::pack2(acc[mi][4 * j], acc[mi][4 * j + 1]),
                    DTypeTraits<TOut>::pack2(acc[mi][4 * j + 2], acc[mi][4 * j + 3]),
                    DTypeTraits<TOut>::pack2(acc[mi][4 * j + 4], acc[mi][4 * j + 5]),
                    DTypeTraits<TOut>::pack2(acc[mi][4 * j + 6], acc[mi][4 * j + 7]));
      }
    }
  } else {
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int j = 4 * slab + q;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = mi * 64 + 16 * warp + 8 * half + lane / 4;
          const int byte = 32 * q + 8 * (lane % 4);
          const unsigned int addr =
              slot + row * 128 + (((byte >> 4) ^ (row & 7)) << 4) + (byte & 15);
          st_shared_v2f32(addr, acc[mi][4 * j + 2 * half], acc[mi][4 * j + 2 * half + 1]);
        }
      }
    }
  }
}

}  // namespace sm90
}  // namespace kt
