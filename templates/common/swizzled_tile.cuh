// The XOR-swizzled shared-memory tile of the sm_80 kernels (GEMM operands, attention Q/K/V):
// 16-bit elements, rows contiguous, each row's 16-byte chunks permuted so that ldmatrix and
// cp.async both hit eight distinct 16-byte bank groups.
#pragma once

namespace kt {

// A kRows x kCols tile of 16-bit elements in shared memory, rows contiguous, each row made of
// 16-byte chunks permuted by an XOR swizzle so that the eight rows of an ldmatrix 8x8 matrix
// (rows r..r+7, r % 8 == 0, one logical chunk) and the eight chunks of a quarter-warp's copies
// hit eight distinct 16-byte bank groups.
//   Rows of 8, 16 or 32 chunks start on a 128-byte line: physical chunk = chunk ^ (row % 8).
//   Rows of 4 chunks (64 bytes): a 128-byte line holds two rows, so rows 2i and 2i + 1 share the
//   key i % 4 and differ in the line half.
//   Rows of 12 chunks (192 bytes) start at line offset 64 * (row % 2), so their first 8 chunks
//   use key (row % 8) ^ (4 * (row % 2)) (the +64 flips bit 2 of the bank group) and their last 4
//   chunks stay among chunks 8..11 with key (row / 2) % 4: the pair (key, row % 2) differs
//   across eight rows.
// A key never changes a chunk's group of 8 (or of 4), so physical chunk = chunk ^ key(row, slot).
template <int kRows, int kCols>
struct SwizzledTile {
  static constexpr int kChunksPerRow = kCols / 8;
  static constexpr int kRowBytes = kCols * 2;
  static constexpr int kBytes = kRows * kRowBytes;
  // All chunks of a row share one key.
  static constexpr bool kUniformKey = kChunksPerRow % 8 == 0 || kChunksPerRow == 4;
  static constexpr int kKeys = kUniformKey ? 1 : 2;
  static_assert(kChunksPerRow % 8 == 0 || kChunksPerRow == 4 || kChunksPerRow == 12,
                "rows must be 64 or 192 bytes or a multiple of 128 bytes");
  static_assert(kRows % 16 == 0, "rows come in whole 16-row fragments");

  // The XOR key of key slot `slot` (0, or 1 for chunks 8..11 of 12-chunk rows) in row `row`;
  // it depends on row % 8 only.
  static __device__ __forceinline__ int key(int row, int slot) {
    if constexpr (kChunksPerRow == 4) {
      return (row >> 1) & 3;
    } else if constexpr (kUniformKey) {
      return row & 7;
    } else {
      return slot == 0 ? ((row & 7) ^ ((row & 1) << 2)) : ((row >> 1) & 3);
    }
  }

  // The key slot of logical chunk `chunk`.
  static __host__ __device__ constexpr int slot(int chunk) { return kUniformKey ? 0 : chunk / 8; }

  // Byte offset of logical chunk `chunk` of row `row`.
  static __device__ __forceinline__ int offset(int row, int chunk) {
    return row * kRowBytes + ((chunk ^ key(row, slot(chunk))) << 4);
  }
};

}  // namespace kt
