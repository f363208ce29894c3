// The sm_90a GEMM family: C = A·B with FP32 accumulation on wgmma, warp-specialized. A producer
// warpgroup streams A and B tiles by TMA into a kStages-deep ring of 128B-swizzled shared-memory
// stages guarded by full/empty mbarriers; 1 or 2 consumer warpgroups multiply them with wgmma and
// store their rows of C directly. CTAs are persistent: each walks the output tiles (times the K
// splits) in grouped raster order. Instantiated by NVRTC name expressions (kt::gemm_sm90<...>).
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/gemm_splitk_reduce.cuh"
#include "kerntune/gemm/tile_order.cuh"

namespace kt {
namespace sm90 {

// K depth of a stage: one 128-byte swizzle row of 16-bit elements, so every operand tile is one
// TMA box per 64 rows or columns and a k16 step is a +32 B (K-major) or +2048 B (N-major) move.
constexpr int kTileK = 64;
constexpr int kRowBytes = kTileK * 2;

// Register split of the two-consumer CTA (384 threads, 168 registers each at launch):
// 40 + 2 x 232 = 3 x 168, so the consumers' increase is exactly what the producer gives up.
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

// One unit of work of a persistent CTA: an output tile and the K range of one split.
struct WorkUnit {
  int tile_m, tile_n;
  int split;
  int k_begin, k_end;
};

// Unit `unit` of tiles_m * tiles_n * splits: splits are the slow index, so CTAs running together
// work on neighbouring tiles of the same split.
__device__ __forceinline__ WorkUnit work_unit(int unit, const GemmParams& p, bool split_k) {
  WorkUnit w;
  const int num_tiles = p.tiles_m * p.tiles_n;
  w.split = split_k ? unit / num_tiles : 0;
  grouped_tile(unit - w.split * num_tiles, p.tiles_m, p.tiles_n, p.raster_group, w.tile_m,
               w.tile_n);
  w.k_begin = split_k ? w.split * p.k_per_split : 0;
  w.k_end = split_k && p.k - w.k_begin > p.k_per_split ? w.k_begin + p.k_per_split : p.k;
  return w;
}

// Writes a consumer's kMI x (64 x kN) wgmma accumulator tiles to c (leading dimension ldc),
// masked to m x n. row0, col0: this thread's first element, (16 warp + lane / 4, 2 (lane % 4))
// from the consumer's corner; tile mi starts 64 mi rows lower. Pairs go out as one access when
// c and ldc allow it.
template <typename T, int kMI, int kAccs>
__device__ __forceinline__ void store_accumulators(T* c, long long ldc, int m, int n, int row0,
                                                   int col0, const float (&acc)[kMI][kAccs]) {
  const bool pairs_aligned =
      ldc % 2 == 0 && reinterpret_cast<unsigned long long>(c) % (2 * sizeof(T)) == 0;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + mi * 64 + half * 8;
      if (row >= m) continue;
      T* c_row = c + row * ldc;
#pragma unroll
      for (int j = 0; j < kAccs / 4; ++j) {
        const int col = col0 + j * 8;
        const float lo = acc[mi][4 * j + 2 * half];
        const float hi = acc[mi][4 * j + 2 * half + 1];
        if (pairs_aligned && col + 1 < n) {
          store_two(c_row + col, lo, hi);
        } else {
          if (col < n) store_one(c_row + col, lo);
          if (col + 1 < n) store_one(c_row + col + 1, hi);
        }
      }
    }
  }
}

}  // namespace sm90

// C[m, n] = A[m, k] · B with FP32 accumulation (operand layouts: GemmParams). A CTA has one
// producer warpgroup and kConsumers consumer warpgroups; it computes kTileM x kTileN tiles, each
// consumer kTileM / kConsumers rows of them (64 or 128, one m64 wgmma per 64 rows) by kTileN
// columns. params.a_map: A as {K, M} (innermost first), box {64, kTileM}. params.b_map: for
// kBIsNxK ("nt"), B as {K, N}, box {64, kTileN}; otherwise ("nn"), B as {N, K}, box {64, 64}.
// Both 128B-swizzled, OOB fill zero; the host guarantees 16-byte row strides (K % 8 == 0, and
// N % 8 == 0 for nn) and 16-byte aligned operands. kSplitK: unit z of the K splits sums K range
// [z * k_per_split, min(k, (z + 1) * k_per_split)) into FP32 slice z of params.gemm.workspace
// (row stride n) and never touches C. Launch: 128 * (kConsumers + 1) threads, any grid (CTAs
// loop over tiles_m * tiles_n * num_splits units), gemm_sm90_smem_bytes() of dynamic shared memory.
template <typename TIn, typename TOut, int kTileM, int kTileN, int kStages, int kConsumers,
          bool kBIsNxK, bool kSplitK>
__global__ void __launch_bounds__(128 * (kConsumers + 1), 1)
    gemm_sm90(const __grid_constant__ GemmSm90Params params) {
  static_assert(DTypeTraits<TIn>::kIsMmaOperand, "TIn must be kt::bf16 or kt::fp16");
  static_assert(sizeof(TOut) == 2 || sizeof(TOut) == 4, "TOut must be kt::bf16, kt::fp16 or float");
  static_assert(kConsumers == 1 || kConsumers == 2, "one or two consumer warpgroups");
  static_assert(kTileM == 64 * kConsumers || kTileM == 128 * kConsumers,
                "each consumer owns 64 or 128 rows");
  static_assert(kTileN % 64 == 0 && kTileN <= 256, "kTileN must be 64, 128, 192 or 256");
  static_assert(kTileM / kConsumers / 64 * kTileN / 2 <= 128, "at most 128 accumulators per thread");
  static_assert(kStages >= 2 && kStages <= 8, "kStages must be in [2, 8]");

  constexpr int kRowsPerConsumer = kTileM / kConsumers;
  constexpr int kMI = kRowsPerConsumer / 64;  // m64 wgmma tiles per consumer
  constexpr int kAccs = kTileN / 2;           // FP32 accumulators per thread per m64 tile
  constexpr int kKSteps = sm90::kTileK / 16;
  constexpr int kAStageBytes = kTileM * sm90::kRowBytes;
  constexpr int kBStageBytes = kTileN * sm90::kRowBytes;
  constexpr int kBAtomBytes = sm90::kTileK * sm90::kRowBytes;  // nn: 64 K-rows of 64 columns

  // NOTE: the 128B swizzle is a function of absolute shared addresses, so the stages must start
  // on 1024-byte boundaries; the host adds 1024 bytes of slack for this alignment.
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned int smem_a = (shared_address(smem_raw) + 1023u) & ~1023u;
  const unsigned int smem_b = smem_a + kStages * kAStageBytes;
  const unsigned int full_bars = smem_b + kStages * kBStageBytes;  // TMA bytes have landed
  const unsigned int empty_bars = full_bars + kStages * 8;          // every consumer is done

  const GemmParams& p = params.gemm;
  if (threadIdx.x == 0) {
#pragma unroll 1
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full_bars + 8 * s, 1);
      mbarrier_init(empty_bars + 8 * s, kConsumers);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  const int num_units = p.tiles_m * p.tiles_n * (kSplitK ? p.num_splits : 1);
  const int warpgroup = threadIdx.x / 128;

  if (warpgroup == 0) {
    // Producer: one thread issues every TMA load of the CTA.
    if constexpr (kConsumers == 2) setmaxnreg_dec<sm90::kProducerRegs>();
    if (threadIdx.x != 0) return;
    int stage = 0;
    unsigned int phase = 0;
    for (int unit = blockIdx.x; unit < num_units; unit += gridDim.x) {
      const sm90::WorkUnit w = sm90::work_unit(unit, p, kSplitK);
      const int m0 = w.tile_m * kTileM;
      const int n0 = w.tile_n * kTileN;
      // nn: 64-column atoms wholly right of N are not loaded; their stale shared memory only
      // feeds columns of C that are never stored. (Partial boxes are zero-filled and count whole.)
      int b_atoms = kTileN / 64;
      if constexpr (!kBIsNxK) {
        const int atoms_left = (p.n - n0 + 63) / 64;
        if (atoms_left < b_atoms) b_atoms = atoms_left;
      }
      const unsigned int stage_bytes = kAStageBytes + b_atoms * kBAtomBytes;
      for (int k = w.k_begin; k < w.k_end; k += sm90::kTileK) {
        mbarrier_wait(empty_bars + 8 * stage, phase ^ 1);
        const unsigned int full = full_bars + 8 * stage;
        mbarrier_arrive_expect_tx(full, stage_bytes);
        tma_load_2d(smem_a + stage * kAStageBytes, &params.a_map, k, m0, full);
        if constexpr (kBIsNxK) {
          tma_load_2d(smem_b + stage * kBStageBytes, &params.b_map, k, n0, full);
        } else {
          for (int j = 0; j < b_atoms; ++j)
            tma_load_2d(smem_b + stage * kBStageBytes + j * kBAtomBytes, &params.b_map, n0 + 64 * j,
                        k, full);
        }
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  // Consumers.
  if constexpr (kConsumers == 2) setmaxnreg_inc<sm90::kConsumerRegs>();
  const int consumer = warpgroup - 1;
  const int thread = threadIdx.x % 128;
  float acc[kMI][kAccs];
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int i = 0; i < kAccs; ++i) acc[mi][i] = 0.0f;

  int stage = 0;
  unsigned int phase = 0;
  for (int unit = blockIdx.x; unit < num_units; unit += gridDim.x) {
    const sm90::WorkUnit w = sm90::work_unit(unit, p, kSplitK);
    const int num_k_tiles = (w.k_end - w.k_begin + sm90::kTileK - 1) / sm90::kTileK;
    int previous_stage = 0;
    for (int kt = 0; kt < num_k_tiles; ++kt) {
      mbarrier_wait(full_bars + 8 * stage, phase);
      const unsigned int a_tile =
          smem_a + stage * kAStageBytes + consumer * kRowsPerConsumer * sm90::kRowBytes;
      const unsigned int b_tile = smem_b + stage * kBStageBytes;
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) fence_accumulators(acc[mi]);
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks) {
        const unsigned long long desc_b = kBIsNxK
                                              ? kmajor_descriptor(b_tile + 32 * ks)
                                              : mnmajor_descriptor(b_tile + 2048 * ks, kBAtomBytes);
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi) {
          // The first k16 step of a tile overwrites the previous tile's accumulators.
          wgmma_m64k16_ss<TIn, kTileN, kBIsNxK ? 0 : 1>(
              acc[mi], kmajor_descriptor(a_tile + mi * 64 * sm90::kRowBytes + 32 * ks), desc_b,
              kt > 0 || ks > 0);
        }
      }
      wgmma_commit();
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) fence_accumulators(acc[mi]);
      // Keep this k-tile's wgmma in flight; the previous one is done, so its stage is free.
      wgmma_wait<1>();
      if (kt > 0 && thread == 0) mbarrier_arrive(empty_bars + 8 * previous_stage);
      previous_stage = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    wgmma_wait<0>();
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) fence_accumulators(acc[mi]);
    if (thread == 0) mbarrier_arrive(empty_bars + 8 * previous_stage);

    const int warp = thread / 32;
    const int lane = thread % 32;
    const int row0 = w.tile_m * kTileM + consumer * kRowsPerConsumer + 16 * warp + lane / 4;
    const int col0 = w.tile_n * kTileN + 2 * (lane % 4);
    if constexpr (kSplitK) {
      float* slice = p.workspace + static_cast<long long>(w.split) * p.m * p.n;
      sm90::store_accumulators(slice, p.n, p.m, p.n, row0, col0, acc);
    } else {
      sm90::store_accumulators(static_cast<TOut*>(p.c), p.ldc, p.m, p.n, row0, col0, acc);
    }
  }
}

}  // namespace kt
