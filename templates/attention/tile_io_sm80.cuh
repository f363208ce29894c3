// The sm_80 attention kernels' shared-memory tile I/O: ldmatrix lane addressing into a
// SwizzledTile (LaneAddress) and cp.async copies of a global tile into one, rows past the tensor
// zero-filled (copy_tile_async). Used by the FlashAttention-2 forward and backward (sm_80+).
#pragma once

#include "kerntune/common/ptx_sm80.cuh"
#include "kerntune/common/swizzled_tile.cuh"

namespace kt {
namespace attn {

// Per-lane ldmatrix addressing into a SwizzledTile: the lane gives the address of row `row` (+ 16 i
// for fragment i, a multiple of 16 rows keeps row % 8) and logical chunk 2 j + c0, c0 in {0, 1}.
// With j = 4 jh + jl, chunk 2 j + c0 = 8 jh + (2 jl ^ c0), and a key (< 8, or < 4 in a 4-chunk
// group) only permutes the low bits, so the chunk's in-row offset is 128 jh + (x[slot] ^ 32 jl)
// with x[s] = (c0 ^ key(row, s)) * 16: every address is one of four lane values (jl) plus a
// constant, which keeps the loop-invariant address registers at four per operand.
template <typename Tile>
struct LaneAddress {
  int row_offset;
  int x[Tile::kKeys];

  __device__ __forceinline__ LaneAddress(int row, int c0) {
    row_offset = row * Tile::kRowBytes;
#pragma unroll
    for (int s = 0; s < Tile::kKeys; ++s) x[s] = (c0 ^ Tile::key(row, s)) << 4;
  }

  // Offset of logical chunk 2 j + c0 in row row + 16 i (j and i are constants after unrolling,
  // mostly; a j known only at run time picks its key by a select, not an indexed load).
  __device__ __forceinline__ int at(int i, int j) const {
    int key_x = x[0];
    if constexpr (Tile::kKeys == 2) key_x = Tile::slot(2 * j) == 0 ? x[0] : x[1];
    return (row_offset + (key_x ^ (32 * (j % 4)))) + i * 16 * Tile::kRowBytes + 128 * (j / 4);
  }
};

// Copies chunks [kFirstChunk, kFirstChunk + kColumnChunks) of rows [0, kRows) of a tile whose row r
// starts at global `src` + r * ld into the SwizzledTile at shared address `tile_addr`; each thread
// keeps one chunk column and steps down kThreads / kColumnChunks rows at a time. Rows >= num_rows
// are zero-filled without reading global memory. kFull: every row is in bounds (num_rows is
// ignored), so no copy needs a compare or selects (ptxas cannot fold `r < kRows` itself: it does
// not know that thread < kThreads).
template <int kRows, int kCols, int kThreads, int kFirstChunk, int kColumnChunks, bool kFull>
__device__ __forceinline__ void copy_columns_async(unsigned int tile_addr,
                                                   const unsigned short* src, long long ld,
                                                   int num_rows, int thread) {
  using Tile = SwizzledTile<kRows, kCols>;
  static_assert(kThreads % kColumnChunks == 0, "a thread keeps one chunk column");
  constexpr int kRowsPerIter = kThreads / kColumnChunks;
  constexpr int kIters = (kRows + kRowsPerIter - 1) / kRowsPerIter;
  const int row = thread / kColumnChunks;
  const int chunk = kFirstChunk + thread % kColumnChunks;
  const unsigned short* p = src + row * ld + chunk * 8;
  const int offset = Tile::offset(row, chunk);
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int r = row + it * kRowsPerIter;
    if (kRows % kRowsPerIter != 0 && r >= kRows) break;
    // A step of a multiple of 8 rows keeps the swizzle key.
    const int dst = kRowsPerIter % 8 == 0 ? offset + it * kRowsPerIter * Tile::kRowBytes
                                          : Tile::offset(r, chunk);
    const bool in_bounds = kFull || r < num_rows;
    cp_async_16(tile_addr + dst, in_bounds ? p + it * kRowsPerIter * ld : src,
                in_bounds ? 16u : 0u);
  }
}

// Copies rows [0, kRows) of a tile whose row r starts at global `src` + r * ld (16-bit elements,
// kCols contiguous, 16-byte aligned) into the SwizzledTile at shared address `tile_addr` with
// cp.async in 16-byte chunks. Rows >= num_rows are zero-filled without reading global memory.
// Issues no commit. A quarter-warp copies 8 chunks of one row, or for 12-chunk rows also the last
// 4 chunks of two adjacent rows: eight distinct bank groups either way. kFull: num_rows >= kRows.
template <int kRows, int kCols, int kThreads, bool kFull = false>
__device__ __forceinline__ void copy_tile_async(unsigned int tile_addr, const void* src,
                                                long long ld, int num_rows, int thread) {
  using Tile = SwizzledTile<kRows, kCols>;
  const unsigned short* base = static_cast<const unsigned short*>(src);
  if constexpr (Tile::kUniformKey) {
    copy_columns_async<kRows, kCols, kThreads, 0, Tile::kChunksPerRow, kFull>(tile_addr, base, ld,
                                                                              num_rows, thread);
  } else {
    copy_columns_async<kRows, kCols, kThreads, 0, 8, kFull>(tile_addr, base, ld, num_rows, thread);
    copy_columns_async<kRows, kCols, kThreads, 8, 4, kFull>(tile_addr, base, ld, num_rows, thread);
  }
}

}  // namespace attn
}  // namespace kt
