// The small-M GEMM family (decoding, M <= 64): C[M, N] = A[M, K] · B when streaming B once at
// full memory bandwidth is the whole cost. B goes from global memory straight into mma.sync
// fragments (no shared-memory staging); A comes through L1. Runs on sm_80 and later.
// Instantiated by NVRTC name expressions (kt::gemm_small_m<...>); the split-K reduce
// (kt::gemm_splitk_reduce) comes with it from gemm_splitk_reduce.cuh.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm80.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/gemm_splitk_reduce.cuh"

namespace kt {
namespace small_m {

// NOTE: the loads are volatile asm so that they keep their place relative to the (volatile) mma
// of the previous batch: the next batch's loads must be in flight while this one computes.

// The inline PTX of a 16-byte read-only load into %0..%3 from [%4], issued only when %5 is
// nonzero (the registers are zero otherwise); `qualifiers`: its cache hints, a string literal.
#define KT_LOAD_NC_16(qualifiers)     \
  "{\n"                               \
  "  .reg .pred p;\n"                 \
  "  setp.ne.b32 p, %5, 0;\n"         \
  "  mov.b32 %0, 0;\n"                \
  "  mov.b32 %1, 0;\n"                \
  "  mov.b32 %2, 0;\n"                \
  "  mov.b32 %3, 0;\n"                \
  "  @p ld.global.nc" qualifiers      \
  ".v4.u32 {%0, %1, %2, %3}, [%4];\n" \
  "}\n"

// 16 bytes of a streamed operand (B): read-only, not allocated in L1 (so A stays there), with a
// 256-byte L2 prefetch hint. When `pred` is false nothing is read and v is zero.
__device__ __forceinline__ void load_stream_16(unsigned int (&v)[4], const void* p, bool pred) {
  asm volatile(KT_LOAD_NC_16(".L1::no_allocate.L2::256B")
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "l"(p), "r"(static_cast<int>(pred)));
}

// 16 bytes of a reused operand (A): read-only, cached in L1 for the CTA's other warps.
__device__ __forceinline__ void load_reused_16(unsigned int (&v)[4], const void* p, bool pred) {
  asm volatile(KT_LOAD_NC_16("")
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "l"(p), "r"(static_cast<int>(pred)));
}

// 8 bytes of a reused operand (A), as load_reused_16.
__device__ __forceinline__ void load_reused_8(unsigned int (&v)[2], const void* p, bool pred) {
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %3, 0;\n"
      "  mov.b32 %0, 0;\n"
      "  mov.b32 %1, 0;\n"
      "  @p ld.global.nc.v2.u32 {%0, %1}, [%2];\n"
      "}\n"
      : "=r"(v[0]), "=r"(v[1])
      : "l"(p), "r"(static_cast<int>(pred)));
}

// The 16-bit halves `lo` of x and y (kSelector 0x5410) or `hi` of x and y (0x7632) as one word,
// x's half in the lower 16 bits.
template <unsigned int kSelector>
__device__ __forceinline__ unsigned int permute_halves(unsigned int x, unsigned int y) {
  unsigned int out;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(out) : "r"(x), "r"(y), "n"(kSelector));
  return out;
}

}  // namespace small_m

// C[m, n] = A[m, k] · B with FP32 accumulation, computed as Cᵀ = B·Aᵀ on mma.sync m16n8k16: B's
// N dimension is the mma's M side (16 columns of C per fragment), A's rows are the mma's N side
// (8 rows of C per fragment, so M = 1 wastes 7 of 8 and M = 64 wastes none).
//
// A CTA owns kTileM rows of C by kWarpN * kWarpsN columns; its warps form a kWarpsN (along N) by
// kWarpsK (along K) grid. Warp (wn, wk) owns kWarpN columns and the batches wk, wk + kWarpsK, ...
// of kBatchK elements of the CTA's K range; it holds two batches of B words in registers, used
// in turn, so up to 2 * kWarpN * kBatchK / 256 16-byte loads per thread are in flight (the loads
// of batch i + 2 go out before batch i + 1's mma wait); A is prefetched into L1 with its batch's
// B loads and read chunk by chunk just before its mma. The warps along K are summed through
// shared memory at the end.
//
// The dot product over a batch may visit K in any order as long as A and B agree, so each
// thread's contiguous 16 bytes serve directly as fragments:
// - nt (B is N x K): lane (g, t) loads 16 bytes of B rows n+g and n+g+8 at k + 8t; words 0-1
//   and 2-3 are the k16 halves of two mma, and A row m+g at k + 8t supplies the matching words.
// - nn (B is K x N): lane (g, t) loads 16 bytes (8 columns, n + 8g ..) of the four rows
//   k + 4t .. k + 4t + 3; byte permutes pair rows (4t, 4t+1) and (4t+2, 4t+3) of one column
//   into a word, giving four m16 fragments of columns n + 8g + 2q (row g) and + 1 (row g + 8);
//   A row m+g at k + 4t (8 bytes) supplies the matching words.
//
// Requirements (validate() checks them): K % 8 == 0 (and N % 8 == 0 for nn), 16-byte aligned A
// and B; any M <= kTileM * gridDim tiles, any N. kSplitK: split z sums K range
// [z * k_per_split, min(k, (z + 1) * k_per_split)) into FP32 slice z of params.workspace (row
// stride n), every element of its tile, and never touches C. Launch: grid (tiles_m * tiles_n,
// 1, splits) with the M tile fastest, 32 * kWarpsN * kWarpsK threads,
// (kWarpsK - 1) * kTileM * kWarpN * kWarpsN * 4 bytes of dynamic shared memory.
template <typename TIn, typename TOut, int kTileM, int kWarpN, int kWarpsN, int kWarpsK,
          int kBatchK, bool kBIsNxK, bool kSplitK>
__global__ void __launch_bounds__(32 * kWarpsN * kWarpsK) gemm_small_m(const GemmParams params) {
  static_assert(DTypeTraits<TIn>::kIsMmaOperand, "TIn must be kt::bf16 or kt::fp16");
  static_assert(sizeof(TOut) == 2 || sizeof(TOut) == 4, "TOut must be kt::bf16, kt::fp16 or float");
  static_assert(kTileM == 8 || kTileM == 16 || kTileM == 32 || kTileM == 64,
                "kTileM must be 8, 16, 32 or 64");
  static_assert(kBIsNxK ? (kWarpN == 16 || kWarpN == 32 || kWarpN == 64) : kWarpN == 64,
                "kWarpN must be 16, 32 or 64 (nt) or 64 (nn)");
  static_assert(kBatchK % (kBIsNxK ? 32 : 16) == 0,
                "kBatchK must be a multiple of 32 (nt), 16 (nn)");
  static_assert(kWarpsN * kWarpsK <= 16, "at most 16 warps");

  if (test_fault(params.c)) return;

  constexpr int kTilesM8 = kTileM / 8;             // n8 fragments over M
  constexpr int kGroups = kWarpN / 16;             // m16 fragments over N
  constexpr int kBLoads = kWarpN * kBatchK / 256;  // 16-byte B loads per thread per batch
  constexpr int kAWordsPerChunk = kTilesM8 * (kBIsNxK ? 4 : 2);  // A words per thread per chunk
  constexpr int kChunks = kBatchK / (kBIsNxK ? 32 : 16);         // k chunks of a batch
  constexpr int kAcc = kGroups * kTilesM8 * 4;                   // accumulators per thread

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int wn = warp % kWarpsN;
  const int wk = warp / kWarpsN;
  const int g = lane / 4;
  const int t = lane % 4;
  const int m0 = (blockIdx.x % params.tiles_m) * kTileM;
  const int n_warp = (blockIdx.x / params.tiles_m) * (kWarpN * kWarpsN) + wn * kWarpN;

  long long k_begin, k_end;
  split_k_range<kSplitK>(params, k_begin, k_end);
  const int num_batches =
      k_end > k_begin ? static_cast<int>((k_end - k_begin + kBatchK - 1) / kBatchK) : 0;

  const unsigned short* a = static_cast<const unsigned short*>(params.a);
  const unsigned short* b = static_cast<const unsigned short*>(params.b);
  const long long lda = params.lda, ldb = params.ldb;

  // Loads the B words of the batch that starts at K offset kb (a batch past the end loads
  // zeros and reads nothing).
  auto load_b = [&](unsigned int(&bw)[kBLoads][4], long long kb) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if constexpr (kBIsNxK) {
        const long long k = kb + 32 * c + 8 * t;
#pragma unroll
        for (int i = 0; i < kGroups; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int n = n_warp + 16 * i + 8 * h + g;
            small_m::load_stream_16(bw[(c * kGroups + i) * 2 + h], b + n * ldb + k,
                                    k < k_end && n < params.n);
          }
      } else {
        const long long k = kb + 16 * c + 4 * t;
#pragma unroll
        for (int i = 0; i < kGroups / 4; ++i) {
          const int n = n_warp + 64 * i + 8 * g;
#pragma unroll
          for (int r = 0; r < 4; ++r)
            small_m::load_stream_16(bw[(c * (kGroups / 4) + i) * 4 + r], b + (k + r) * ldb + n,
                                    k + r < k_end && n < params.n);
        }
      }
    }
  };

  // Loads the A words of chunk c of the batch at kb: rows m0 + 8j + g, the 8 (nt) or 4 (nn)
  // elements this thread's B words pair with.
  auto load_a = [&](unsigned int(&aw)[kAWordsPerChunk], long long kb, int c) {
#pragma unroll
    for (int j = 0; j < kTilesM8; ++j) {
      const int m = m0 + 8 * j + g;
      if constexpr (kBIsNxK) {
        const long long k = kb + 32 * c + 8 * t;
        unsigned int v[4];
        small_m::load_reused_16(v, a + m * lda + k, k < k_end && m < params.m);
#pragma unroll
        for (int w = 0; w < 4; ++w) aw[j * 4 + w] = v[w];
      } else {
        const long long k = kb + 16 * c + 4 * t;
        unsigned int v[2];
        small_m::load_reused_8(v, a + m * lda + k, k < k_end && m < params.m);
        aw[j * 2] = v[0];
        aw[j * 2 + 1] = v[1];
      }
    }
  };

  float acc[kGroups][kTilesM8][4];
  zero_fragments(acc);

  // The mma of one batch (see the fragment mapping above). A is loaded chunk by chunk as it is
  // needed: it comes from L1, and double-buffering it would cost as many registers as B.
  auto compute_batch = [&](const unsigned int(&bw)[kBLoads][4], long long kb) {
    if constexpr (kBIsNxK) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        unsigned int aw[kAWordsPerChunk];
        load_a(aw, kb, c);
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
          for (int i = 0; i < kGroups; ++i) {
            const unsigned int* lo = bw[(c * kGroups + i) * 2];
            const unsigned int* hi = bw[(c * kGroups + i) * 2 + 1];
            const unsigned int frag_b[4] = {lo[2 * s], hi[2 * s], lo[2 * s + 1], hi[2 * s + 1]};
#pragma unroll
            for (int j = 0; j < kTilesM8; ++j) {
              const unsigned int frag_a[2] = {aw[j * 4 + 2 * s], aw[j * 4 + 2 * s + 1]};
              mma_m16n8k16<TIn>(acc[i][j], frag_b, frag_a);
            }
          }
      }
    } else {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        unsigned int aw[kAWordsPerChunk];
        load_a(aw, kb, c);
#pragma unroll
        for (int i = 0; i < kGroups / 4; ++i) {
          const unsigned int* r0 = bw[(c * (kGroups / 4) + i) * 4];
          const unsigned int* r1 = bw[(c * (kGroups / 4) + i) * 4 + 1];
          const unsigned int* r2 = bw[(c * (kGroups / 4) + i) * 4 + 2];
          const unsigned int* r3 = bw[(c * (kGroups / 4) + i) * 4 + 3];
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const unsigned int frag_b[4] = {small_m::permute_halves<0x5410>(r0[q], r1[q]),
                                            small_m::permute_halves<0x7632>(r0[q], r1[q]),
                                            small_m::permute_halves<0x5410>(r2[q], r3[q]),
                                            small_m::permute_halves<0x7632>(r2[q], r3[q])};
#pragma unroll
            for (int j = 0; j < kTilesM8; ++j) {
              const unsigned int frag_a[2] = {aw[j * 2], aw[j * 2 + 1]};
              mma_m16n8k16<TIn>(acc[4 * i + q][j], frag_b, frag_a);
            }
          }
        }
      }
    }
  };

  // Prefetches into L1 the lines of A that the batch at kb will read (rows m0 .. m0 + kTileM - 1,
  // K range [kb, kb + kBatchK)), so that compute_batch's A loads hit L1 instead of waiting a
  // loaded L2 round trip after the batch's B words arrived. One warp along N per K slot issues
  // them (its peers read the same A); lines past M or K are skipped. A hint: A rows need not be
  // 128-byte aligned, and a line it misses is only an L2 hit.
  auto prefetch_a = [&](long long kb) {
    if (wn != 0) return;
    constexpr int kElemsPerLine = 64;  // 128 bytes of 16-bit elements
    constexpr int kLinesPerRow = kBatchK >= kElemsPerLine ? kBatchK / kElemsPerLine : 1;
#pragma unroll
    for (int l0 = 0; l0 < kTileM * kLinesPerRow; l0 += 32) {
      const int l = l0 + lane;
      const int m = m0 + l / kLinesPerRow;
      const long long k = kb + static_cast<long long>(l % kLinesPerRow) * kElemsPerLine;
      if ((kTileM * kLinesPerRow % 32 == 0 || l < kTileM * kLinesPerRow) && m < params.m &&
          k < k_end)
        asm volatile("prefetch.global.L1 [%0];\n" ::"l"(a + m * lda + k));
    }
  };

  // Two register buffers of B used in turn (batch wk, then every kWarpsK-th batch after it): the
  // loads of the batch after next are issued before the next batch's mma wait for its words,
  // so two batches per warp are in flight, and no register copy waits for a load (a copy
  // b_cur = b_next at the end of an iteration would stall on the loads just issued and leave
  // one batch in flight).
  unsigned int b_even[kBLoads][4], b_odd[kBLoads][4];
  const long long k_step = static_cast<long long>(kWarpsK) * kBatchK;
  long long kb = k_begin + static_cast<long long>(wk) * kBatchK;
  prefetch_a(kb);
  load_b(b_even, kb);
#pragma unroll 1
  for (int batch = wk; batch < num_batches; batch += 2 * kWarpsK) {
    prefetch_a(kb + k_step);
    load_b(b_odd, kb + k_step);
    compute_batch(b_even, kb);
    if (batch + kWarpsK >= num_batches) break;
    prefetch_a(kb + 2 * k_step);
    load_b(b_even, kb + 2 * k_step);
    compute_batch(b_odd, kb + k_step);
    kb += 2 * k_step;
  }

  // The warps along K add their partial sums into warp (wn, 0), in a fixed order. Every warp
  // holds the same fragment layout, so element f of lane l is the same C element in each.
  if constexpr (kWarpsK > 1) {
    extern __shared__ __align__(16) unsigned char small_m_smem[];
    float* partial = reinterpret_cast<float*>(small_m_smem);
    // Element f of a thread's accumulators is acc[f / (4 kTilesM8)][f / 4 % kTilesM8][f % 4];
    // slot layout [f][lane], so a warp's 32 stores or loads of one f hit 32 banks.
    if (wk > 0) {
      float* slot = partial + ((wk - 1) * kWarpsN + wn) * kAcc * 32;
#pragma unroll
      for (int f = 0; f < kAcc; ++f)
        slot[f * 32 + lane] = acc[f / (4 * kTilesM8)][f / 4 % kTilesM8][f % 4];
    }
    __syncthreads();
    if (wk > 0) return;
#pragma unroll 1
    for (int w = 0; w < kWarpsK - 1; ++w) {
      const float* slot = partial + (w * kWarpsN + wn) * kAcc * 32;
#pragma unroll
      for (int f = 0; f < kAcc; ++f)
        acc[f / (4 * kTilesM8)][f / 4 % kTilesM8][f % 4] += slot[f * 32 + lane];
    }
  }

  // acc[gi][j][2h + e] is C[m0 + 8j + 2t + e][column(gi, h)].
  float* slice = nullptr;
  if constexpr (kSplitK)
    slice = params.workspace + static_cast<long long>(blockIdx.z) * params.m * params.n;
  TOut* c = static_cast<TOut*>(params.c);
#pragma unroll
  for (int gi = 0; gi < kGroups; ++gi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = kBIsNxK ? n_warp + 16 * gi + 8 * h + g
                            : n_warp + 64 * (gi / 4) + 8 * g + 2 * (gi % 4) + h;
      if (n >= params.n) continue;
#pragma unroll
      for (int j = 0; j < kTilesM8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int m = m0 + 8 * j + 2 * t + e;
          if (m >= params.m) continue;
          if constexpr (kSplitK) {
            slice[static_cast<long long>(m) * params.n + n] = acc[gi][j][2 * h + e];
          } else {
            store_one(c + m * params.ldc + n, acc[gi][j][2 * h + e]);
          }
        }
    }
}

}  // namespace kt
