// The sm_80 GEMM family: C = A·B with FP32 accumulation on mma.sync m16n8k16, fed by a
// kStages-deep cp.async pipeline through XOR-swizzled shared memory.
// Instantiated by NVRTC name expressions (kt::gemm_sm80<...>); runs on sm_80 and later. The
// split-K reduce (kt::gemm_splitk_reduce) comes with it from gemm_splitk_reduce.cuh.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm80.cuh"
#include "kerntune/common/swizzled_tile.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/gemm_splitk_reduce.cuh"
#include "kerntune/gemm/tile_order.cuh"

namespace kt {
namespace sm80 {

// Moves one k-tile of a row-major global operand (16-bit elements, leading dimension ld) into a
// SwizzledTile<kRows, kCols>. The k-loop advances along columns (kAdvanceRows false: A, and B
// stored N x K) or along rows (B stored K x N). Elements outside [0, row_limit) x [0, col_limit)
// are stored as zero.
// kVectorLoads: each of kThreads threads copies kIters chunks of 16 bytes by cp.async, which
// needs 16-byte aligned rows and col_limit % 8 == 0. Otherwise (any alignment) element by
// element: thread t's n-th element is element n * kThreads + t of the tile in row order, so a
// warp reads 32 consecutive elements of a row (64 contiguous bytes, where lanes 16 bytes apart
// would touch 16 sectors for the same 64 useful bytes), held in registers and stored to shared
// memory 2 bytes at a time, at most kMaxGroup elements in flight a thread (the registers the
// kernel can spare beside its accumulators).
template <int kRows, int kCols, int kThreads, bool kAdvanceRows, bool kVectorLoads, int kMaxGroup>
struct TileLoader {
  using Tile = SwizzledTile<kRows, kCols>;
  static constexpr int kChunks = kRows * Tile::kChunksPerRow;
  static constexpr int kIters = kChunks / kThreads;
  static constexpr int kRowsPerIter = kThreads / Tile::kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "the threads must divide the chunks of a tile");
  static_assert(kThreads % Tile::kChunksPerRow == 0, "a thread keeps one chunk column");
  // Element mode: a thread's elements of a k-tile, staged in groups (one a register, so that no
  // instruction needs a load's value before the group's last load is issued) whose loads are all
  // in flight at once.
  static constexpr int kElems = 8 * kIters;
  static constexpr int kGroup = kElems < kMaxGroup ? kElems : kMaxGroup;
  static constexpr int kGroups = kElems / kGroup;
  // Element n's offset from the thread's first: whole rows when a row holds at most kThreads
  // elements, else steps of kThreads along the row.
  static constexpr int kRowStep = kThreads >= kCols ? kThreads / kCols : 0;
  static constexpr int kStepsPerRow = kThreads >= kCols ? 1 : kCols / kThreads;
  static_assert(kVectorLoads || kElems % kGroup == 0, "whole groups of elements");
  static_assert(kVectorLoads || (kThreads >= kCols ? kThreads % kCols : kCols % kThreads) == 0,
                "element mode: the threads tile whole rows, or a row whole steps of the threads");

  const unsigned short* base;  // operand base: the (valid) source address of zero-filled chunks
  const unsigned short* src;   // this thread's first chunk (element) in the current k-tile
  long long ld;                // leading dimension, in elements
  int row, col;                // global coordinates of src
  int row_limit, col_limit;
  int smem_row, smem_chunk;  // tile coordinates of this thread's first chunk (element mode:
                             // smem_chunk is the first element's column)
  unsigned int staged[kVectorLoads ? 1 : kGroup];

  __device__ __forceinline__ TileLoader(const void* operand, long long ld_, int first_row,
                                        int first_col, int row_limit_, int col_limit_, int thread) {
    base = static_cast<const unsigned short*>(operand);
    if constexpr (kVectorLoads) {
      smem_row = thread / Tile::kChunksPerRow;
      smem_chunk = thread % Tile::kChunksPerRow;
      col = first_col + smem_chunk * 8;
    } else {
      smem_row = thread / kCols;
      smem_chunk = thread % kCols;
      col = first_col + smem_chunk;
    }
    row = first_row + smem_row;
    ld = ld_;
    src = base + row * ld + col;
    row_limit = row_limit_;
    col_limit = col_limit_;
  }

  // Copies iteration `iter` (0 <= iter < kIters) of the current k-tile into the tile at shared
  // address `tile_addr` (vector mode).
  __device__ __forceinline__ void copy(int iter, unsigned int tile_addr) const {
    const int r = row + iter * kRowsPerIter;
    const unsigned int dst = tile_addr + Tile::offset(smem_row + iter * kRowsPerIter, smem_chunk);
    const unsigned short* p = src + iter * kRowsPerIter * ld;
    const bool in_bounds = r < row_limit && col < col_limit;
    cp_async_16(dst, in_bounds ? p : base, in_bounds ? 16u : 0u);
  }

  // Element mode: the offsets of the thread's element n from its first, in rows and columns.
  static __device__ __forceinline__ int element_row(int n) {
    return kThreads >= kCols ? n * kRowStep : n / kStepsPerRow;
  }
  static __device__ __forceinline__ int element_col(int n) {
    return kThreads >= kCols ? 0 : (n % kStepsPerRow) * kThreads;
  }

  // Element mode: loads group g of the thread's elements into registers.
  // NOTE: one running row offset, passed through an empty asm at each step, so that the
  // elements' offsets (the same every k-tile) are not hoisted out of the k-loop into a live
  // 64-bit register each, which spills (an offset, not a pointer: through the asm a pointer
  // would lose its global address space and load generically).
  __device__ __forceinline__ void fetch(int g) {
    long long offset = element_row(g * kGroup) * ld;
    const long long step = (kThreads >= kCols ? kRowStep : 1) * ld;
    const int rows_left = row_limit - row, cols_left = col_limit - col;
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      const int n = g * kGroup + i;
      const int dr = element_row(n), dc = element_col(n);
      staged[i] = dr < rows_left && dc < cols_left ? src[offset + dc] : 0u;
      if (element_row(n + 1) != dr) {
        offset += step;
        asm volatile("" : "+l"(offset));
      }
    }
  }

  // Element mode: stores group g from registers into the tile at shared address `tile_addr`
  // (the thread's coordinates made opaque for the same reason: its offsets would be hoisted).
  __device__ __forceinline__ void store(int g, unsigned int tile_addr) const {
    int r0 = smem_row, c0 = smem_chunk;
    asm volatile("" : "+r"(r0), "+r"(c0));
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      const int n = g * kGroup + i;
      const int r = r0 + element_row(n), c = c0 + element_col(n);
      st_shared_2(tile_addr + Tile::offset(r, c / 8) + (c % 8) * 2, staged[i]);
    }
  }

  // Copies slice `slice` (a constant after unrolling) of kSlices of the current k-tile into the
  // tile at shared address `tile_addr`; a k-tile's slices run in order. Vector mode: iterations
  // i % kSlices == slice. Element mode with one group: its loads at the first slice, its stores
  // at the last (the mma between them hide part of the loads' latency); with more: groups
  // g % kSlices == slice, each loaded and stored.
  template <int kSlices>
  __device__ __forceinline__ void copy_slice(int slice, unsigned int tile_addr) {
    if constexpr (kVectorLoads) {
#pragma unroll
      for (int iter = 0; iter < kIters; ++iter)
        if (iter % kSlices == slice) copy(iter, tile_addr);
    } else if constexpr (kGroups == 1) {
      if (slice == 0) fetch(0);
      if (slice == kSlices - 1) store(0, tile_addr);
    } else {
#pragma unroll 1
      for (int g = slice; g < kGroups; g += kSlices) {
        fetch(g);
        store(g, tile_addr);
      }
    }
  }

  // Moves to the next k-tile, kTileK elements further along K.
  template <int kTileK>
  __device__ __forceinline__ void advance() {
    if constexpr (kAdvanceRows) {
      src += kTileK * ld;
      row += kTileK;
    } else {
      src += kTileK;
      col += kTileK;
    }
  }
};

// Writes the warp's kMI x kNI accumulator fragments (rows row0 + 16 mi + {0, 8}, columns
// col0 + 8 ni + {0, 1}, already offset by the lane) to c with bounds checks against m x n.
// Adjacent pairs go out as one access when c, ldc allow it.
template <typename T, int kMI, int kNI>
__device__ __forceinline__ void store_accumulators(T* c, long long ldc, int m, int n, int row0,
                                                   int col0, const float (&acc)[kMI][kNI][4]) {
  const bool aligned = pairs_aligned(c, ldc);
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + mi * 16 + half * 8;
      if (row >= m) continue;
      T* c_row = c + row * ldc;
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
        const int col = col0 + ni * 8;
        const float lo = acc[mi][ni][2 * half];
        const float hi = acc[mi][ni][2 * half + 1];
        store_pair_masked(c_row, col, n, lo, hi, aligned);
      }
    }
  }
}

}  // namespace sm80

// C[m, n] = A[m, k] · B with FP32 accumulation (see GemmParams for the operand layouts).
// One CTA computes a kTileM x kTileN tile of C with (kTileM / kWarpM) x (kTileN / kWarpN) warps,
// each owning a kWarpM x kWarpN sub-tile. kBIsNxK: B is N x K row-major ("nt"); otherwise
// K x N row-major ("nn"). kVectorA, kVectorB: the host guarantees that operand's rows are 16-byte
// aligned (A: K % 8 == 0; B: K % 8 == 0 for nt, N % 8 == 0 for nn) and its base too; otherwise it
// is loaded element by element. kSplitK: blockIdx.z sums K range [z * k_per_split,
// min(k, (z + 1) * k_per_split)) into FP32 slice z of params.workspace (row stride n), writing
// every element of its tile, and never touches C. Launch: grid (tiles_m * tiles_n, 1, splits),
// 32 * warps threads, kStages * (kTileM + kTileN) * kTileK * 2 bytes of dynamic shared memory.
template <typename TIn, typename TOut, int kTileM, int kTileN, int kTileK, int kWarpM, int kWarpN,
          int kStages, bool kBIsNxK, bool kVectorA, bool kVectorB, bool kSplitK>
__global__ void __launch_bounds__(32 * (kTileM / kWarpM) * (kTileN / kWarpN))
    gemm_sm80(const GemmParams params) {
  static_assert(DTypeTraits<TIn>::kIsMmaOperand, "TIn must be kt::bf16 or kt::fp16");
  static_assert(sizeof(TOut) == 2 || sizeof(TOut) == 4, "TOut must be kt::bf16, kt::fp16 or float");
  static_assert(kTileM == 16 || kTileM == 32 || kTileM == 64 || kTileM == 128 || kTileM == 256,
                "kTileM must be one of 16, 32, 64, 128, 256");
  static_assert(kTileN == 16 || kTileN == 32 || kTileN == 64 || kTileN == 128 || kTileN == 256,
                "kTileN must be one of 16, 32, 64, 128, 256");
  static_assert(kTileK == 32 || kTileK == 64, "kTileK must be 32 or 64");
  static_assert(kWarpM == 16 || kWarpM == 32 || kWarpM == 64, "kWarpM must be 16, 32 or 64");
  static_assert(kWarpN == 16 || kWarpN == 32 || kWarpN == 64, "kWarpN must be 16, 32 or 64");
  static_assert(kTileM % kWarpM == 0 && kTileN % kWarpN == 0, "warp tiles must divide the tile");
  static_assert(kStages >= 2 && kStages <= 8, "kStages must be in [2, 8]");
  static_assert(kBIsNxK || kTileN >= 64, "the nn layout needs kTileN >= 64 (128-byte B rows)");

  if (test_fault(params.c)) return;
  constexpr int kWarpsM = kTileM / kWarpM;
  constexpr int kWarpsN = kTileN / kWarpN;
  constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static_assert(kThreads <= 256, "at most 8 warps");
  static_assert((kTileM * kTileK / 8) % kThreads == 0 && (kTileN * kTileK / 8) % kThreads == 0,
                "the threads must divide the 16-byte chunks of each operand tile");
  constexpr int kMI = kWarpM / 16;  // m16 fragments per warp
  constexpr int kNI = kWarpN / 8;   // n8 fragments per warp
  constexpr int kKSteps = kTileK / 16;

  using TileA = SwizzledTile<kTileM, kTileK>;
  using TileB = SwizzledTile<kBIsNxK ? kTileN : kTileK, kBIsNxK ? kTileK : kTileN>;
  // Element loads in flight a thread, shared by the operands loaded so: fewer beside more
  // accumulators, so that nothing spills.
  constexpr int kInFlight = kMI * kNI * 4 <= 32 ? 32 : kMI * kNI * 4 <= 64 ? 16 : 8;
  constexpr int kMaxGroup = !kVectorA && !kVectorB ? kInFlight / 2 : kInFlight;
  using LoaderA = sm80::TileLoader<kTileM, kTileK, kThreads, false, kVectorA, kMaxGroup>;
  using LoaderB = sm80::TileLoader<kBIsNxK ? kTileN : kTileK, kBIsNxK ? kTileK : kTileN, kThreads,
                                   !kBIsNxK, kVectorB, kMaxGroup>;
  // Load iterations are spread over the first kKSteps - 1 k16 steps of the previous k-tile.
  constexpr int kCopySteps = kKSteps - 1;

  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned int smem_a = shared_address(smem);
  const unsigned int smem_b = smem_a + kStages * TileA::kBytes;

  const int thread = threadIdx.x;
  const int lane = thread % 32;
  const int warp = thread / 32;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;

  int tile_m, tile_n;
  grouped_tile(blockIdx.x, params.tiles_m, params.tiles_n, params.raster_group, tile_m, tile_n);
  const int m0 = tile_m * kTileM;
  const int n0 = tile_n * kTileN;

  long long k_begin, k_end;
  split_k_range<kSplitK>(params, k_begin, k_end);
  const int num_k_tiles =
      k_end > k_begin ? static_cast<int>((k_end - k_begin + kTileK - 1) / kTileK) : 0;

  const int k0 = static_cast<int>(k_begin);
  const int k1 = static_cast<int>(k_end);
  LoaderA load_a(params.a, params.lda, m0, k0, params.m, k1, thread);
  LoaderB load_b(params.b, params.ldb, kBIsNxK ? n0 : k0, kBIsNxK ? k0 : n0,
                 kBIsNxK ? params.n : k1, kBIsNxK ? k1 : params.n, thread);

  // Prologue: k-tiles 0 .. kStages - 2, one commit group each (empty past the last k-tile).
#pragma unroll
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (stage < num_k_tiles) {
      load_a.template copy_slice<1>(0, smem_a + stage * TileA::kBytes);
      load_b.template copy_slice<1>(0, smem_b + stage * TileB::kBytes);
    }
    cp_async_commit();
    load_a.template advance<kTileK>();
    load_b.template advance<kTileK>();
  }

  // Per-lane ldmatrix offsets inside one stage (lane l addresses row l % 8 of matrix l / 8).
  // A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
  // are a0..a3 of the m16k16 fragment. B when N x K: (n 0-7, k 0-7), (n 0-7, k 8-15),
  // (n 8-15, k 0-7), (n 8-15, k 8-15) are {b0, b1} of two n8 fragments. B when K x N, through
  // ldmatrix.trans: (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15), the same.
  // The swizzle depends on row % 8 only, so +16 rows adds 16 row lengths; and it XORs the chunk
  // index, so chunk c ^ 2j (k step j for A and N x K B, n pair j for K x N B, whose chunk
  // warp_n * kWarpN / 8 + lane / 16 + 2 j never carries into the warp's base) is offset ^ 32 j.
  unsigned int a_offsets[kKSteps];
  {
    const int a0 = TileA::offset(warp_m * kWarpM + lane % 16, lane / 16);
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) a_offsets[ks] = a0 ^ (ks * 32);
  }
  constexpr int kBOffsets = kBIsNxK ? kKSteps : kNI / 2;
  unsigned int b_offsets[kBOffsets];
  if constexpr (kBIsNxK) {
    const int b0 = TileB::offset(warp_n * kWarpN + lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) b_offsets[ks] = b0 ^ (ks * 32);
  } else {
    const int b0 = TileB::offset(lane % 8 + ((lane / 8) % 2) * 8, warp_n * kWarpN / 8 + lane / 16);
#pragma unroll
    for (int p = 0; p < kNI / 2; ++p) b_offsets[p] = b0 ^ (p * 32);
  }

  float acc[kMI][kNI][4];
  zero_fragments(acc);

  // Fragments of two k16 steps: the next step's are loaded while the current step's mma run.
  unsigned int a_frag[2][kMI][4];
  unsigned int b_frag[2][kNI][2];
  auto load_fragments = [&](int buf, int stage, int ks) {
    const unsigned int a_stage = smem_a + stage * TileA::kBytes + a_offsets[ks];
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
      ldmatrix_x4(a_frag[buf][mi], a_stage + mi * 16 * TileA::kRowBytes);
#pragma unroll
    for (int p = 0; p < kNI / 2; ++p) {
      unsigned int r[4];
      if constexpr (kBIsNxK) {
        ldmatrix_x4(r, smem_b + stage * TileB::kBytes + b_offsets[ks] + p * 16 * TileB::kRowBytes);
      } else {
        ldmatrix_x4_trans(
            r, smem_b + stage * TileB::kBytes + ks * 16 * TileB::kRowBytes + b_offsets[p]);
      }
      b_frag[buf][2 * p][0] = r[0];
      b_frag[buf][2 * p][1] = r[1];
      b_frag[buf][2 * p + 1][0] = r[2];
      b_frag[buf][2 * p + 1][1] = r[3];
    }
  };

  cp_async_wait<kStages - 2>();
  __syncthreads();
  int read_stage = 0;
  int write_stage = kStages - 1;
  load_fragments(0, 0, 0);

  for (int kt = 0; kt < num_k_tiles; ++kt) {
    const bool copy_next = kt + kStages - 1 < num_k_tiles;
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      if (ks == kKSteps - 1) {
        // k-tile kt + 1 has landed (its group is kStages - 2 groups old) and every warp is
        // done reading the stage that the next k-tile's copies overwrite.
        cp_async_wait<kStages - 2>();
        __syncthreads();
        read_stage = read_stage == kStages - 1 ? 0 : read_stage + 1;
      }
      load_fragments((ks + 1) % 2, read_stage, (ks + 1) % kKSteps);

      if (ks < kCopySteps) {
        // k-tile kt + kStages - 1 into the stage that k-tile kt - 1 used.
        if (copy_next) {
          load_a.template copy_slice<kCopySteps>(ks, smem_a + write_stage * TileA::kBytes);
          load_b.template copy_slice<kCopySteps>(ks, smem_b + write_stage * TileB::kBytes);
        }
        if (ks == kCopySteps - 1) {
          cp_async_commit();
          load_a.template advance<kTileK>();
          load_b.template advance<kTileK>();
          write_stage = write_stage == kStages - 1 ? 0 : write_stage + 1;
        }
      }

#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
        for (int j = 0; j < kNI; ++j) {
          // Serpentine order: consecutive mma share an A or a B fragment.
          const int ni = mi % 2 == 0 ? j : kNI - 1 - j;
          mma_m16n8k16<TIn>(acc[mi][ni], a_frag[ks % 2][mi], b_frag[ks % 2][ni]);
        }
      }
    }
  }
  // Only empty groups can remain; drain them so no copy is in flight when the CTA exits.
  cp_async_wait<0>();

  const int row0 = m0 + warp_m * kWarpM + lane / 4;
  const int col0 = n0 + warp_n * kWarpN + (lane % 4) * 2;
  if constexpr (kSplitK) {
    float* slice = params.workspace + static_cast<long long>(blockIdx.z) * params.m * params.n;
    sm80::store_accumulators(slice, params.n, params.m, params.n, row0, col0, acc);
  } else {
    sm80::store_accumulators(static_cast<TOut*>(params.c), params.ldc, params.m, params.n, row0,
                             col0, acc);
  }
}

}  // namespace kt
