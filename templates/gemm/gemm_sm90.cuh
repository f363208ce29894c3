// The sm_90a GEMM family: C = A·B with FP32 accumulation on wgmma. Warp-specialized, a producer
// warpgroup streams A and B tiles by TMA into a kStages-deep ring of 128B-swizzled shared-memory
// stages guarded by full/empty mbarriers; 1 or 2 consumer warpgroups multiply them with wgmma and
// store their rows of C, directly or staged for TMA stores. Without warp specialization the same
// warpgroups both load (one thread, a ring ahead of them) and compute. CTAs (or clusters of 2
// sharing B by multicast) are persistent: each walks the output tiles (times the K splits) in
// grouped raster order; with split-K the splits' partial sums are reduced in the kernel, through L2
// by the unit of a tile's last split or, when every unit is resident, by all of them, or through
// distributed shared memory when a tile's splits are one cluster's CTAs. Swap-AB instances compute
// C^T and store it transposed (decode steps: weights on the wgmma M side). Instantiated by NVRTC
// name expressions (kt::gemm_sm90<...>). The kernel is the wiring of its parts, one header each:
//   sm90_traits.cuh              the instance's constants, shared-memory layout, barrier set-up
//   sm90_persistent.cuh          schedule: the units a CTA walks (sm90_work_units.cuh: what a
//                                unit is)
//   sm90_producer.cuh            producer main loop: a unit's k-tiles into the ring by TMA
//   sm90_mn_copies.cuh           producer: an operand TMA cannot address, by cp.async
//   sm90_consumer.cuh            consumer main loop: a unit's k-tiles from the ring into wgmma
//   sm90_epilogue_direct.cuh     epilogue: accumulators stored straight to C
//   sm90_epilogue_tma.cuh        epilogue: slabs staged in shared memory and TMA-stored
//   sm90_split_k_serial.cuh      schedule: split-K through L2, the last split reduces
//   sm90_split_k_distributed.cuh schedule: split-K through L2, every split reduces a stripe
//   sm90_split_k_cluster.cuh     schedule: split-K in a cluster, through distributed smem
//   sm90_stream_k.cuh            schedule: stream-K pieces and their owner's sum
// and their pieces: sm90_flags.cuh (the workspace's flags and epoch), sm90_partials.cuh (partial
// sums), sm90_store.cuh (direct stores of C), sm90_trace.cuh (the phase trace).
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/common/stage_ring.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_consumer.cuh"
#include "kerntune/gemm/sm90_epilogue_direct.cuh"
#include "kerntune/gemm/sm90_epilogue_tma.cuh"
#include "kerntune/gemm/sm90_flags.cuh"
#include "kerntune/gemm/sm90_persistent.cuh"
#include "kerntune/gemm/sm90_producer.cuh"
#include "kerntune/gemm/sm90_split_k_cluster.cuh"
#include "kerntune/gemm/sm90_split_k_distributed.cuh"
#include "kerntune/gemm/sm90_split_k_serial.cuh"
#include "kerntune/gemm/sm90_stream_k.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_traits.cuh"

namespace kt {

// C[m, n] = A[m, k] · B with FP32 accumulation (operand layouts: GemmParams). A CTA has one
// producer warpgroup (kWarpSpecialized; without it, consumer 0's thread 0 issues the loads) and
// kConsumers consumer warpgroups; it computes kTileM x kTileN tiles, each
// consumer kTileM / kConsumers rows of them (64 or 128, one m64 wgmma per 64 rows) by kTileN
// columns. params.a_map: A as {K, M} (innermost first), box {64, kTileM / kClusterN} (swap-AB nn:
// A as {M, K}, box {64, 64}). params.b_map: for a K-major B (kBIsNxK, "nt", or swap-AB), B as
// {K, N}, box {64, kTileN / kCluster}; otherwise ("nn"), B as {N, K}, box {64, 64 / kCluster}. Both
// 128B-swizzled, OOB fill zero; the host guarantees 16-byte row strides (K % 8 == 0, and N % 8 == 0
// for nn) and 16-byte aligned operands. kEpilogueSlots == 0: consumers store C from registers. > 0:
// they stage column slabs of their rows in that many 1024-byte-aligned shared buffers and TMA-store
// them through params.c_map (C as {N, M}, box {kSlabCols, kTileM / kConsumers}: 128 bytes wide and
// 128B-swizzled, or for 144- and 32-column tiles half the tile wide and unswizzled; needs N *
// sizeof(TOut) % 16 == 0); the stores drain while the next tile's main loop runs. kCluster == 2:
// clusters of two CTAs on vertically adjacent tiles; each CTA loads half of the shared B tile and
// multicasts it to both. kClusterN == 2: clusters of two CTAs on horizontally adjacent tiles
// sharing A the same way (a decode step's weight tile, swapped, for two token tiles; cuBLASLt's 1x2
// clusters). kSplitK: the unit of split z of a tile sums K range [z * k_per_split, min(k, (z + 1) *
// k_per_split)); the tile is reduced in the kernel (below). kSwapAB (swap-AB, direct stores):
// the host passes the caller's B as A and its A as B, m and n exchanged, so the kernel computes
// C^T = B·A^T with the weights of a decode step on the wgmma M side and its few tokens on the N
// side (16 to 64 columns); element (i, j) of that product is stored at c[j * ldc + i]. With nn
// (kBIsNxK false) the kernel's A is M-major, fed to wgmma through its transpose bit.
// kTileK: the K depth of a stage, 64 (one swizzle atom) or 128 or 256: two or four atoms of
// a K-major operand a stage (an M- or N-major one's boxes are as deep as the stage), so a small
// tile's ring turns over fewer stages (each costs a producer/consumer round trip, whatever the
// stage's bytes) for the same bytes in flight. Launch: 128 * (kConsumers + kWarpSpecialized)
// threads, cluster (kCluster * kClusterN * kClusterK, 1, 1), any grid that is a multiple of the
// cluster (clusters loop over ceil(tiles_m / kCluster) * ceil(tiles_n / kClusterN) * num_splits /
// kClusterK units; with split-K through L2 every CTA of the grid must be resident at once),
// smem_bytes() (gemm_config.hpp) of dynamic shared memory.
//
// kMnCopyBytes (4 or 8; 0: none): nn's B has rows only that aligned, which TMA cannot address, so
// the operand it is (the kernel's B, or swap-AB's A) has no map and the producer warpgroup copies
// it with cp.async (sm90_mn_copies.cuh; the host guarantees its base, row stride and N in whole
// copies).
//
// Split-K (kSplitK), with no second kernel and no FP32 pass over C. Through L2 (kClusterK == 1),
// two modes, chosen at run time and uniformly for the launch: distributed when every unit has a
// CTA (cluster) of its own (num_units <= the clusters of the grid, so each runs at most one unit
// and all splits of a tile run at once; and the last split's flags fit the flag region, which in
// practice they always do; sm90_split_k_distributed.cuh), serial otherwise
// (sm90_split_k_serial.cuh, with the memory ordering, epochs and deadlock freedom of both).
// Through distributed shared memory (kClusterK > 1): sm90_split_k_cluster.cuh. Stream-K
// (kStreamK; no split-K, clusters or swap-AB): sm90_stream_k.cuh.
//
// Barrier invariants (s: stage, k: the k-th use of stage s in this CTA, k = 0, 1, ...):
//  * full[s], count 1: phase k completes when this CTA's producer has arrived with expect_tx of
//    the whole stage (A + all of B) and every byte has landed, its own TMA bytes and (cluster)
//    the peer's multicast half (of B, or of A with kClusterN). A peer byte can land before the
//    expect_tx (tx-count goes negative, the pending arrival keeps the phase open); it cannot land
//    in phase k - 1 because the peer issues it only after its empty[s] phase k - 1, which needs
//    our consumers' release of use k - 1, which needs our full[s] phase k - 1.
//  * empty[s], count kConsumers * kPair (kPair = kCluster * kClusterN, the CTAs sharing the
//    stage's loads): every consumer warpgroup of the cluster arrives once per use on every CTA's
//    empty[s] (release_stage: lane r of its warp 0 on CTA r). The producer waits on its own
//    empty[s] before writing stage s anywhere in the cluster. These
//    arrivals and waits have CTA-scope semantics on purpose (see mbarrier_arrive_cluster): they
//    order wgmma reads before TMA writes, and no generic-proxy data crosses CTAs through them.
//    Since every full barrier needs both producers' bytes (each CTA loads half of B or A), no
//    consumer can start use k + 1 of stage s before both empty[s] barriers completed phase k, so
//    no arrival of use k + 1 can be counted in phase k.
//  * Consumers release a stage only after the wgmma reading it has completed (wait_group 1
//    after the next k-tile's wgmma is issued, wait_group 0 at the end of a tile).
//  * Without a producer warpgroup, consumer 0's thread 0 fills stage s only after waiting on
//    empty[s] as the producer would, right after its own warpgroup's release of s, so it waits
//    for the other consumer's release only. That consumer waits on nothing warpgroup 0 does
//    except full barriers of stages filled before, so the wait ends.
//  * Cluster: barriers are initialized and fenced (fence.mbarrier_init.release.cluster) before a
//    cluster barrier, so no peer touches them uninitialized. Pairs meet no cluster barrier at
//    exit: the producer's thread 0 waits for the release of every stage's last fill (the producer
//    tail), which needs the peer's consumers' arrivals, the last remote accesses into this CTA;
//    they come after the peer used every byte this CTA multicast to it, and every byte the peer
//    multicast here landed before this CTA's consumers' full-barrier waits. (Cluster split-K's
//    CTAs meet barrier C after each unit, so none reads a peer that has exited.)
//  * Bulk partial sums: sm90_split_k_distributed.cuh. Epilogue slots: sm90_epilogue_tma.cuh.
template <typename TIn, typename TOut, int kTileM, int kTileN, int kTileK, int kStages,
          int kConsumers, bool kBIsNxK, bool kSplitK, int kEpilogueSlots, int kCluster,
          int kClusterK, bool kSwapAB, int kClusterN, bool kStreamK, bool kWarpSpecialized,
          int kMnCopyBytes>
__global__ void __launch_bounds__(128 * (kConsumers + (kWarpSpecialized ? 1 : 0)), 1)
    gemm_sm90(const __grid_constant__ GemmSm90Params params) {
  using K = sm90::GemmTraits<TIn, TOut, kTileM, kTileN, kTileK, kStages, kConsumers, kBIsNxK,
                             kSplitK, kEpilogueSlots, kCluster, kClusterK, kSwapAB, kClusterN,
                             kStreamK, kWarpSpecialized, kMnCopyBytes>;

  if (test_fault(params.gemm.c)) return;
  if (threadIdx.x == 0) {
    sm90::trace_mark(params.gemm.flags, kTraceEntry);
    sm90::trace_cycles(params.gemm.flags, kTraceEntryCycles);
    sm90::trace_sm_id(params.gemm.flags);
    // The descriptors' fetch overlaps the barriers' set-up rather than the first loads (cheap;
    // no measurable gain).
    if constexpr (!K::kACopied) prefetch_tensor_map(&params.a_map);
    if constexpr (!K::kBCopied) prefetch_tensor_map(&params.b_map);
    if constexpr (kEpilogueSlots > 0) prefetch_tensor_map(&params.c_map);
  }

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const sm90::SmemLayout<K> smem((shared_address(smem_raw) + 1023u) & ~1023u);
  const GemmParams& p = params.gemm;
  const int rank = K::kInCluster ? int(cluster_ctarank()) : 0;
  sm90::init_barriers<K>(smem);
  const sm90::UnitWalk walk = sm90::unit_walk<K>(p);
  const int warpgroup = threadIdx.x / 128;

  if (kWarpSpecialized && warpgroup == 0) {
    // Producer: one thread issues every TMA load of the CTA (with a copied operand every thread
    // copies its part beside it); with split-K through L2, warp 1 reads this launch's epoch (two
    // global round trips that delay neither the loads nor the consumers' main loop: produce);
    // with stream-K, thread 64 publishes the first piece; the others idle to the end (cluster
    // split-K: to its barriers).
    if constexpr (kConsumers == 2) setmaxnreg_dec<sm90::kProducerRegs>();
    if constexpr (kStreamK) sm90::publish_first_piece<K>(p, smem, walk);
    sm90::produce<K>(params, smem, walk, rank);
  } else {
    // Consumers: every warpgroup after the producer's, or every warpgroup without one.
    if constexpr (kWarpSpecialized && kConsumers == 2) setmaxnreg_inc<sm90::kConsumerRegs>();
    const int thread = threadIdx.x % 128;
    const sm90::ConsumerThread c{kWarpSpecialized ? warpgroup - 1 : warpgroup, thread, thread / 32,
                                 thread % 32};
    sm90::TmaStoreEpilogue<K> epilogue(smem, c.consumer);
    float acc[K::kMI][K::kAccs];
#pragma unroll
    for (int mi = 0; mi < K::kMI; ++mi)
#pragma unroll
      for (int i = 0; i < K::kAccs; ++i) acc[mi][i] = 0.0f;
    sm90::InlineLoads<K> loads(walk);
    const auto load_next = [&]() { loads.next(params, smem, walk, rank); };
    loads.start(params, smem, walk, rank);

    StageRing<kStages> ring;
    for (int unit = walk.first; unit < walk.num_units; unit += walk.stride) {
      const sm90::WorkUnit w = sm90::walk_unit<K>(walk, unit, p, rank);
      if (kStreamK && w.k_end <= w.k_begin) continue;  // an empty stream-K piece
      const bool marks = unit == walk.first && c.consumer == 0 && c.thread == 0;
      sm90::mma_unit<K>(acc, smem, ring, (w.k_end - w.k_begin + kTileK - 1) / kTileK, c, marks,
                        p.flags, load_next);
      if (marks) {
        sm90::trace_mark(p.flags, kTraceMainLoopDone);
        sm90::trace_cycles(p.flags, kTraceLoopCycles);
      }
      if (!w.has_tile) continue;
      // The schedule's reduction: a unit that only publishes partial sums (or, distributed and
      // cluster split-K, stores its own stripe) is done; otherwise acc holds the whole tile.
      if constexpr (kClusterK > 1) {
        sm90::cluster_split_k<K>(p, smem, w, acc, c, marks);
        continue;
      }
      if constexpr (kStreamK) {
        if (w.sk_tile >= 0 && sm90::stream_k_piece_sums<K>(p, smem, w, acc, c, marks)) continue;
      }
      if constexpr (kSplitK) {
        const sm90::SplitKSlots slots = sm90::split_k_slots<K>(p, w, c.consumer);
        if (sm90::distributed_split_k_mode<K>(p, walk, slots)) {
          sm90::distributed_split_k<K>(p, smem, w, slots, acc, c, marks);
          continue;
        }
        if (sm90::serial_split_k<K>(p, smem, w, slots, acc, c, marks)) continue;
      }
      if constexpr (kEpilogueSlots == 0) {
        sm90::store_tile_direct<K>(p, w, acc, c);
      } else {
        epilogue.store(params, w, acc, c);  // the TMA stores issued
      }
      if (marks) sm90::trace_mark(p.flags, kTraceStored);
    }
    if constexpr (kEpilogueSlots > 0) epilogue.drain(c);
  }
  // Pairs need no barrier at exit (the producer tail). Any barrier here, a cluster's, the CTA's
  // or even a warp's reconvergence, slows the pairs' main loop (bench/NOTES.md, "sm90 GEMM
  // schedules"). Split-K pairs keep the warp's: without it ptxas spills.
  if constexpr (K::kPair > 1 && kSplitK) __syncwarp();
}

}  // namespace kt
