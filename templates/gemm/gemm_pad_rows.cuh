// kt::gemm_pad_rows: copies a matrix of 2-byte elements into rows of 16-byte multiples, so that
// TMA can load an operand whose own rows are not 16-byte aligned (an nn B with N % 8 != 0,
// which the sm90 family then reads from the copy in the GEMM workspace).
#pragma once

#include "kerntune/gemm/gemm_params.h"

namespace kt {

// Eight 2-byte elements, stored as one 16-byte access.
struct alignas(16) GemmPadChunk {
  unsigned int words[4];
};

// dst[r][0 .. cols) = src[r][0 .. cols) for r < rows, and dst[r][cols .. round_up(cols, 8)) = 0.
// A warp copies a row at a time, each lane 8 elements: 2-byte loads (a source row starts on any
// element) and one 16-byte store. Launch: any grid of 256-thread blocks (warps stride over the
// rows).
__global__ void __launch_bounds__(256) gemm_pad_rows(const GemmPadParams params) {
  constexpr int kWarps = 256 / 32;
  const int lane = threadIdx.x % 32;
  const long long warps = static_cast<long long>(gridDim.x) * kWarps;
  const int chunks = (params.cols + 7) / 8;
  const unsigned short* src = static_cast<const unsigned short*>(params.src);
  unsigned short* dst = static_cast<unsigned short*>(params.dst);
  for (long long row = static_cast<long long>(blockIdx.x) * kWarps + threadIdx.x / 32;
       row < params.rows; row += warps) {
    const unsigned short* in = src + row * params.src_ld;
    GemmPadChunk* out = reinterpret_cast<GemmPadChunk*>(dst + row * params.dst_ld);
    for (int chunk = lane; chunk < chunks; chunk += 32) {
      const int col = chunk * 8;
      GemmPadChunk c;
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        const unsigned int lo = col + 2 * w < params.cols ? in[col + 2 * w] : 0u;
        const unsigned int hi = col + 2 * w + 1 < params.cols ? in[col + 2 * w + 1] : 0u;
        c.words[w] = lo | hi << 16;
      }
      out[chunk] = c;
    }
  }
}

}  // namespace kt
