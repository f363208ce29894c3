// The sm90 GEMM's stream-K schedule (kStreamK): the units that would leave the last wave partly
// empty are shared out by K, and the pieces of a tile are summed by the piece that starts it.
//
// Stream-K (kStreamK; no split-K, clusters or swap-AB). When the units do not fill whole waves
// of the grid's CTAs (every SM), the last params.sk_units of them are shared out by K: their
// k-tiles, laid end to end, are cut into one range of params.sk_iters per CTA, which the CTA runs
// after its whole units as pieces, one per tile the range touches (stream_k_piece; the host's
// stream_k_region chooses the region). The piece that starts a tile (k_begin == 0) is its owner,
// always the last piece of its CTA's range or its only one; every other piece of the tile is the
// first piece of a later CTA b and stores its accumulators to slot b of the workspace (one tile
// slot per CTA, store_partials' layout) and publishes flag b (per consumer: word
// kFlagHeaderWords + b * kConsumers + consumer) with this launch's epoch, as split-K's writers
// do. The owner waits for those flags in CTA order, adds each CTA's partial sums into its
// registers and runs the unit's epilogue (direct or TMA stores). Pieces walk K downward, which
// keeps the CTAs reading the same operand blocks in step along K. The ordering and the epoch are
// split-K's (sm90_split_k_serial.cuh). Deadlock freedom: a CTA's whole units and a publishing piece
// wait for nothing, and an owner waits only for publishing pieces, which are the first pieces of
// their CTAs; every CTA of the grid is resident (one per SM, no clusters). A CTA's slot and flag
// are written once a launch.
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_flags.cuh"
#include "kerntune/gemm/sm90_partials.cuh"
#include "kerntune/gemm/sm90_persistent.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_traits.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// The producer warpgroup's thread 64 (idle warp 2): when this CTA's first piece does not start
// its tile, raises each consumer's flag once its 128 threads have arrived after their stores, so
// the consumers go on to their next piece without waiting for the writes.
template <typename K>
__device__ __forceinline__ void publish_first_piece(const GemmParams& p, const SmemLayout<K>& smem,
                                                    const UnitWalk& walk) {
  if (threadIdx.x == 64 && p.sk_units > 0) {
    const WorkUnit w =
        stream_k_piece<K::kTileK>(walk.dp_units + int(blockIdx.x), p, walk.dp_units, walk.stride);
    if (w.k_end > w.k_begin && w.k_begin > 0) {
      for (int c = 0; c < K::kConsumers; ++c) {
        mbarrier_wait(smem.publish_bars + 8 * c, 0);
        st_release_gpu(p.flags + kFlagHeaderWords + blockIdx.x * K::kConsumers + c,
                       load_epoch(smem.epoch_bar, smem.epoch_word));
      }
      trace_mark(p.flags, kTracePublished);
    }
  }
}

// Stream-K for consumer thread c of a piece w (sk_tile >= 0): a piece that does not start its
// tile stores its partial sums in its CTA's slot, arrives for thread 64 to publish them, and
// returns true (nothing to store); the piece that starts it adds the other pieces' partial sums,
// in CTA order, and returns false (the epilogue stores acc). `marks`: stamp the trace.
template <typename K>
__device__ __forceinline__ bool stream_k_piece_sums(const GemmParams& p, const SmemLayout<K>& smem,
                                                    const WorkUnit& w,
                                                    float (&acc)[K::kMI][K::kAccs],
                                                    const ConsumerThread& c, bool marks) {
  constexpr long long kSlotFloats = K::kTileM * K::kTileN;
  constexpr unsigned int kConsumerBytes = K::kRowsPerConsumer * K::kTileN * 4;
  float* const slots = p.workspace + c.consumer * (K::kRowsPerConsumer * K::kTileN);
  if (w.k_begin > 0) {
    store_partials(slots + blockIdx.x * kSlotFloats, acc, c.thread);
    mbarrier_arrive(smem.publish_bars + 8 * c.consumer);
    return true;
  }
  const unsigned int* const flags = p.flags + kFlagHeaderWords + c.consumer;
  const int k_tiles = (p.k + K::kTileK - 1) / K::kTileK;
  const int tile_end = (w.sk_tile + 1) * k_tiles;
  // The peers: the CTAs whose ranges start inside the tile, after its first k-tile (all below
  // the grid's size: the ranges cover the units' k-tiles).
  const int first_peer = (tile_end - k_tiles) / p.sk_iters + 1;
  const int peers_end = (tile_end + p.sk_iters - 1) / p.sk_iters;
  // An owner with peers is its CTA's last piece, so the ring is idle once both consumers are done
  // reading it: each peer's partial tile is bulk-loaded over the consumer's part of it and summed
  // from shared memory.
  const unsigned int staged = smem.a + c.consumer * kConsumerBytes;
  const unsigned int bar = smem.stripe_bars + 8 * c.consumer;
  if (first_peer < peers_end) named_barrier_sync(kPartialsBarrier, 128 * K::kConsumers);
  unsigned int parity = 0;
  for (int b = first_peer; b < peers_end; ++b) {
    if (c.thread == 0) {
      wait_flag(flags + b * K::kConsumers, smem.epoch_bar, smem.epoch_word);
      fence_proxy_async_global();
      mbarrier_arrive_expect_tx(bar, kConsumerBytes);
      bulk_load(staged, slots + b * kSlotFloats, kConsumerBytes, bar);
    }
    mbarrier_wait(bar, parity);
    parity ^= 1;
    add_staged_partials(staged, acc, c.thread);
    named_barrier_sync(1 + c.consumer, 128);  // all read before the next peer lands
  }
  if (marks) trace_mark(p.flags, kTraceFlagsReady);
  return false;
}

}  // namespace sm90
}  // namespace kt
