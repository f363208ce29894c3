// The sm90 GEMM's producer main loop: one thread streams each unit's A and B k-tiles by TMA into
// the ring of stages, each stage once every consumer (of the cluster) has released its last use;
// a copied operand (sm90_mn_copies.cuh) is streamed by the whole producer warpgroup beside it.
// Run by the producer warpgroup (produce) or, without warp specialization, by consumer 0's
// thread 0 between its own k-tiles (InlineLoads).
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/common/stage_ring.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_flags.cuh"
#include "kerntune/gemm/sm90_mn_copies.cuh"
#include "kerntune/gemm/sm90_persistent.cuh"
#include "kerntune/gemm/sm90_split_k_cluster.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_traits.cuh"

namespace kt {
namespace sm90 {

// What the loading thread issues for a unit: the corner of its operand tiles, one stage's TMA
// bytes, its k-tiles and their order; with a copied operand, the atoms copied a stage.
struct UnitLoads {
  int m0, n0, b_atoms, copied_atoms, k_begin, k_tiles;
  unsigned int stage_bytes;
  bool downward;
};

// The loads of unit w, the CTA's `wave`-th unit (the units it walked before this one).
template <typename K>
__device__ __forceinline__ UnitLoads unit_loads(const GemmParams& p, const WorkUnit& w, int wave) {
  UnitLoads u;
  // A CTA without a tile loads its peer's A rows (B columns with kClusterN: in bounds, L2-hot);
  // nothing is stored.
  const bool peer_rows = !w.has_tile && K::kCluster > 1;
  const bool peer_cols = !w.has_tile && K::kClusterN > 1;
  u.m0 = (peer_rows ? w.tile_m - 1 : w.tile_m) * K::kTileM;
  u.n0 = (peer_cols ? w.tile_n - 1 : w.tile_n) * K::kTileN;
  // nn: 64-column atoms wholly right of N are not loaded; their stale shared memory only feeds
  // columns of C that are never stored. (Partial boxes are zero-filled and count whole.) The
  // count depends on n0 only, so both CTAs of a cluster agree on it.
  u.b_atoms = K::kTileN / 64;
  if constexpr (!K::kBKMajor) {
    const int atoms_left = (p.n - u.n0 + 63) / 64;
    if (atoms_left < u.b_atoms) u.b_atoms = atoms_left;
  }
  // A K-major B is one box of kTileN rows (144 is not a whole number of 64-row atoms).
  u.stage_bytes =
      (K::kACopied ? 0 : K::kAStageBytes) + (K::kBKMajor   ? K::kBStageBytes
                                             : K::kBCopied ? 0
                                                           : u.b_atoms * K::kMnAtomBytes);
  // A copied M-major A (swap-AB nn) skips its atoms wholly below M too: they only feed rows of C
  // that are never stored.
  u.copied_atoms = K::kACopied ? min(K::kTileM / 64, (p.m - u.m0 + 63) / 64) : u.b_atoms;
  // Serpentine K: the CTAs run their units in lockstep waves, and a wave's units share operand
  // blocks with the previous wave's (A's rows within a raster group; at 4096^3 all of B), so
  // odd waves walk K downward and start on the K slices the last wave read most recently,
  // which L2 still holds. Not with split-K, whose orders the reductions' bitwise agreement
  // across modes relies on (and whose few tiles make one wave). Stream-K pieces all walk
  // downward: every CTA's range has the same length, so the first pieces (which end their
  // tiles) start together at the last k-tile and the last pieces (which start theirs) end
  // together at the first, each group in step along K.
  u.k_begin = w.k_begin;
  u.k_tiles = (w.k_end - w.k_begin + K::kTileK - 1) / K::kTileK;
  u.downward = (!K::kSplitK && (wave & 1) != 0) || (K::kStreamK && w.sk_tile >= 0);
  return u;
}

// The TMA loads of k-tile k into `stage`, whose full barrier expects their bytes.
template <typename K>
__device__ __forceinline__ void issue_tma_loads(const GemmSm90Params& params,
                                                const SmemLayout<K>& smem, int rank,
                                                const UnitLoads& u, int k, int stage) {
  const unsigned int full = smem.full_bars + 8 * stage;
  const unsigned int b_stage = smem.b + stage * K::kBStageBytes;
  mbarrier_arrive_expect_tx(full, u.stage_bytes);
  // Several atoms along K (kTileK 128, 256): the later boxes may lie wholly past K; TMA fills
  // them with zeros and counts their bytes like any other.
  if constexpr (K::kACopied) {
    // Copied by the warpgroup (load_k_tile).
  } else if constexpr (!K::kAKMajor) {
    // An M-major A (swap-AB nn): one box of kTileK K-rows per 64 columns of M, the atoms wholly
    // below M zero-filled and counted like the rest.
#pragma unroll
    for (int j = 0; j < K::kTileM / 64; ++j)
      tma_load_2d(smem.a + stage * K::kAStageBytes + j * K::kMnAtomBytes, &params.a_map,
                  u.m0 + 64 * j, k, full);
  } else if constexpr (K::kClusterN == 1) {
#pragma unroll
    for (int j = 0; j < K::kKAtoms; ++j)
      tma_load_2d(smem.a + stage * K::kAStageBytes + j * K::kAKAtomBytes, &params.a_map,
                  k + kAtomK * j, u.m0, full);
  } else {
    // Half of A each (rows [m0 + rank * kTileM / 2, ...): 32 or 64 rows, whole swizzle
    // periods), multicast to both CTAs.
#pragma unroll
    for (int j = 0; j < K::kKAtoms; ++j)
      tma_load_2d_multicast(
          smem.a + stage * K::kAStageBytes + j * K::kAKAtomBytes + rank * (K::kAKAtomBytes / 2),
          &params.a_map, k + kAtomK * j, u.m0 + rank * (K::kTileM / 2), full, 0x3);
  }
  if constexpr (K::kCluster == 1) {
    if constexpr (K::kBKMajor) {
#pragma unroll
      for (int j = 0; j < K::kKAtoms; ++j)
        tma_load_2d(b_stage + j * K::kBKAtomBytes, &params.b_map, k + kAtomK * j, u.n0, full);
    } else if constexpr (!K::kBCopied) {
      for (int j = 0; j < u.b_atoms; ++j)
        tma_load_2d(b_stage + j * K::kMnAtomBytes, &params.b_map, u.n0 + 64 * j, k, full);
    }
  } else {
    // Half of B each, multicast to both CTAs: K-major, rows [n0 + rank * kTileN / 2, ...);
    // N-major (nn), half of every atom's K rows, [k + rank * kTileK / 2, ...) (32 rows or more,
    // whole 8-row swizzle periods, so the halves tile the atom exactly).
    if constexpr (K::kBKMajor) {
#pragma unroll
      for (int j = 0; j < K::kKAtoms; ++j)
        tma_load_2d_multicast(b_stage + j * K::kBKAtomBytes + rank * (K::kBKAtomBytes / 2),
                              &params.b_map, k + kAtomK * j, u.n0 + rank * (K::kTileN / 2), full,
                              0x3);
    } else {
      for (int j = 0; j < u.b_atoms; ++j)
        tma_load_2d_multicast(b_stage + j * K::kMnAtomBytes + rank * (K::kMnAtomBytes / 2),
                              &params.b_map, u.n0 + 64 * j, k + (K::kTileK / 2) * rank, full, 0x3);
    }
  }
}

// The i-th k-tile of a unit into `stage` once every consumer has released the stage's last
// use (`phase`: the parity of the stage's uses so far; a fresh stage passes at once). Run by the
// loading thread, or with a copied operand by each producer thread: thread 0 issues the TMA
// loads, and every thread its copies and their arrival.
template <typename K>
__device__ __forceinline__ void load_k_tile(const GemmSm90Params& params, const SmemLayout<K>& smem,
                                            int rank, const UnitLoads& u, int i, int stage,
                                            unsigned int phase) {
  mbarrier_wait(smem.empty_bars + 8 * stage, phase ^ 1);
  const int k = u.k_begin + (u.downward ? u.k_tiles - 1 - i : i) * K::kTileK;
  if (!K::kMnCopied || threadIdx.x == 0) issue_tma_loads<K>(params, smem, rank, u, k, stage);
  if constexpr (K::kMnCopied) {
    const unsigned int copied =
        K::kACopied ? smem.a + stage * K::kAStageBytes : smem.b + stage * K::kBStageBytes;
    copy_mn_atoms<K>(mn_copy_source<K>(params.gemm), copied, K::kACopied ? u.m0 : u.n0,
                     u.copied_atoms, k, threadIdx.x);
    cp_async_mbarrier_arrive_noinc(smem.full_bars + 8 * stage);
  }
}

// Split-K and stream-K: this launch's epoch, read and published to the consumers (begin_launch).
template <typename K>
__device__ __forceinline__ void publish_epoch(const GemmParams& p, const SmemLayout<K>& smem) {
  begin_launch(p.flags, smem.epoch_bar, smem.epoch_word, gridDim.x);
  trace_mark(p.flags, kTraceEpochRead);
}

// The producer warpgroup's loop: thread 0 issues every TMA load of the CTA along the walk; with
// cluster split-K every thread walks the units too, to meet the consumers' three barriers after
// each (cluster_split_barriers); with a copied operand every thread walks them to copy its part.
// Pairs end with the producer tail (the kernel's "Cluster" invariant): thread 0 waits for the
// release of every stage's last fill (a stage never filled passes at once), so that no peer's
// remote arrival is still to come when the CTA exits. Split-K and stream-K read the launch's
// epoch on thread 32 (publish_epoch) before the walk, or with copies, which need that thread,
// once it has filled the ring (or ended a shorter walk), so the two global round trips wait under
// the stages in flight.
template <typename K>
__device__ __forceinline__ void produce(const GemmSm90Params& params, const SmemLayout<K>& smem,
                                        const UnitWalk& walk, int rank) {
  const GemmParams& p = params.gemm;
  constexpr bool kEpochAfterFill = K::kL2Flags && K::kMnCopied;
  if constexpr (K::kL2Flags && !kEpochAfterFill)
    if (threadIdx.x == 32) publish_epoch<K>(p, smem);
  if (threadIdx.x == 0 || K::kClusterK > 1 || K::kMnCopied) {
    StageRing<K::kStages> ring;
    int wave = 0;    // the units this CTA walked before this one
    int filled = 0;  // k-tiles loaded, up to kStages
    for (int unit = walk.first; unit < walk.num_units; unit += walk.stride, ++wave) {
      const WorkUnit w = walk_unit<K>(walk, unit, p, rank);
      if (threadIdx.x == 0 || K::kMnCopied) {
        const UnitLoads u = unit_loads<K>(p, w, wave);
        for (int i = 0; i < u.k_tiles; ++i) {
          load_k_tile<K>(params, smem, rank, u, i, ring.stage, ring.phase);
          if (threadIdx.x == 0 && unit == walk.first && i == 0)
            trace_mark(p.flags, kTraceFirstLoad);
          ring.advance();
          if constexpr (kEpochAfterFill)
            if (filled < K::kStages && ++filled == K::kStages && threadIdx.x == 32)
              publish_epoch<K>(p, smem);
        }
      }
      if constexpr (K::kClusterK > 1) {
        __syncwarp();
        cluster_split_barriers<K::kConsumers>();
      }
    }
    if constexpr (kEpochAfterFill)
      if (filled < K::kStages && threadIdx.x == 32) publish_epoch<K>(p, smem);
    if constexpr (K::kPair > 1) {
      if (threadIdx.x == 0) {
#pragma unroll 1
        for (int s = ring.stage; s < ring.stage + K::kStages; ++s)
          mbarrier_wait(smem.empty_bars + 8 * (s % K::kStages),
                        ring.phase ^ 1 ^ unsigned(s >= K::kStages));
      }
    }
  }
}

// Without a producer warpgroup: thread 0 issues the loads itself along the same walk, kStages
// k-tiles before the first wgmma (start), then one each time its warpgroup releases a stage
// (next), into the stage just released (so it waits there for every consumer's release).
template <typename K>
struct InlineLoads {
  int unit, wave = -1, i = 0;
  StageRing<K::kStages> ring;
  UnitLoads loads{};

  __device__ __forceinline__ explicit InlineLoads(const UnitWalk& walk)
      : unit(walk.first - walk.stride) {}

  // The next k-tile of the walk, if any is left (thread 0 only; nothing with a producer).
  __device__ __forceinline__ void next(const GemmSm90Params& params, const SmemLayout<K>& smem,
                                       const UnitWalk& walk, int rank) {
    if constexpr (!K::kWarpSpecialized) {
      if (threadIdx.x != 0) return;
      while (unit < walk.num_units && i == loads.k_tiles) {
        unit += walk.stride;
        ++wave;
        i = 0;
        if (unit < walk.num_units)
          loads = unit_loads<K>(params.gemm, walk_unit<K>(walk, unit, params.gemm, rank), wave);
      }
      if (unit >= walk.num_units) return;
      load_k_tile<K>(params, smem, rank, loads, i, ring.stage, ring.phase);
      if (unit == walk.first && i == 0) trace_mark(params.gemm.flags, kTraceFirstLoad);
      ++i;
      ring.advance();
    }
  }

  // The first kStages k-tiles (nothing with a producer).
  __device__ __forceinline__ void start(const GemmSm90Params& params, const SmemLayout<K>& smem,
                                        const UnitWalk& walk, int rank) {
#pragma unroll 1
    for (int s = 0; s < (K::kWarpSpecialized ? 0 : K::kStages); ++s) next(params, smem, walk, rank);
  }
};

}  // namespace sm90
}  // namespace kt
