// The sm90 GEMM's distributed split-K through L2 (kSplitK, kClusterK == 1, every unit with a
// CTA (cluster) of its own): every split publishes its partial tile, then sums and stores its own
// stripe of the tile's columns. Ordering, epochs and deadlock freedom:
// sm90_split_k_serial.cuh, whose reducer's sums it matches bitwise.
//
//  * Roles, distributed. Every unit, split z of S, owns a stripe of the tile's columns: the
//    accumulator quads [z * Q / S, (z + 1) * Q / S) of each m64 tile (Q = kAccs / 4, quad q =
//    n8 column block q; some splits own none when S > Q). Each consumer stores all of its
//    accumulators to the slot of (tile, z) (the workspace has a slot per (tile, split)),
//    publishes its flag (word of (tile, z), the last split's too), waits for the flags
//    of every other split of the tile and sums its stripe in the serial reducer's order,
//    ((p(S-1) + p0) + p1) + .. + p(S-2), its own p(z) read back from its slot (sum_quads:
//    run-time loops over the quads and splits), then stores that stripe of C directly
//    (store_pair_masked) whatever kEpilogueSlots is: the TMA-store epilogue is not used for these
//    units. Each CTA so loads one partial tile instead of the reducer's S - 1 tiles, and both modes
//    give bitwise the same C. With kBulkPartials the partial sums move by bulk copies instead of
//    each thread's 16-byte accesses (the same slots and layout, so the same sums): the ring is idle
//    (the CTA's only unit is done), each consumer stages its accumulators there, its thread 0
//    bulk-stores it and publishes once the writes are complete; later that thread
//    polls the flags and bulk-loads the other splits' stripes into the consumer's half of the
//    ring while each thread writes its own stripe there from its registers, and the consumer
//    sums every split's stripe from shared memory (sum_quads).
//  * Bulk partial sums (kBulkPartials), invariants: named barrier kPartialsBarrier over
//    every consumer thread precedes the staging (no wgmma reads the ring any more; every TMA
//    write to it has completed, as each full barrier was waited) and the stripes' loads (each
//    consumer's thread 0 arrives only after its bulk stores completed, so no bulk store still
//    reads the ring); generic writes of the staging are fenced to the async proxy before the
//    bulk store, which completes (wait_group 0) and is fenced (fence.proxy.async.global) before
//    the release of the flag; the loads follow the flags' acquire and a proxy fence and complete
//    on the consumer's stripes mbarrier, whose only phase (0) every consumer thread waits for.
//    Each thread writes its own stripe's float4s (generic stores, after the same barrier) into
//    the slot no bulk load writes, and reads back only its own float4s, so no fence is needed.
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_flags.cuh"
#include "kerntune/gemm/sm90_partials.cuh"
#include "kerntune/gemm/sm90_persistent.cuh"
#include "kerntune/gemm/sm90_split_k_serial.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_traits.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// Whether the launch reduces distributed, uniformly: every unit has a CTA (cluster) of its own,
// so all splits of a tile run at once, and the last split's flags fit the flag region.
template <typename K>
__device__ __forceinline__ bool distributed_split_k_mode(const GemmParams& p, const UnitWalk& walk,
                                                         const SplitKSlots& s) {
  return walk.num_units <= walk.stride &&
         kFlagHeaderWords + p.num_splits * s.tiles * K::kConsumers <= kFlagRegionWords;
}

// Distributed split-K for consumer thread c of unit w: publishes all but its stripe of columns,
// waits for the other splits of the tile and reduces and stores that stripe of C (direct stores,
// whatever kEpilogueSlots is). `marks`: stamp the trace.
template <typename K>
__device__ __forceinline__ void distributed_split_k(const GemmParams& p, const SmemLayout<K>& smem,
                                                    const WorkUnit& w, const SplitKSlots& s,
                                                    float (&acc)[K::kMI][K::kAccs],
                                                    const ConsumerThread& c, bool marks) {
  constexpr int kMI = K::kMI;
  constexpr int kAccs = K::kAccs;
  constexpr long long kSlotFloats = K::kTileM * K::kTileN;
  const long long split_stride = static_cast<long long>(s.tiles) * kSlotFloats;
  float* const slot0 = s.slots + static_cast<long long>(s.tile) * kSlotFloats;
  const unsigned int* const flag0 = s.flags + s.tile * K::kConsumers;
  int q_begin = 0, q_end = 0;
  slice_quads(w.split, p.num_splits, kAccs / 4, q_begin, q_end);
  unsigned int* const my_flag = s.flags + (w.split * s.tiles + s.tile) * K::kConsumers;
  // Published: the whole partial tile, the unit's own stripe too (1 / S of it), which the L2
  // reduction below reads back rather than select between registers and loads.
  if constexpr (K::kBulkPartials) {
    // Every consumer is done reading the ring (this CTA's only unit), so it holds the partial
    // tile; thread 0 bulk-stores it and publishes once the writes are complete.
    const unsigned int staged = smem.a + c.consumer * (K::kRowsPerConsumer * K::kTileN * 4);
    named_barrier_sync(kPartialsBarrier, 128 * K::kConsumers);
    stage_partials(staged, acc, c.thread);
    fence_proxy_async_shared();
    named_barrier_sync(1 + c.consumer, 128);
    if (c.thread == 0) {
      bulk_store(slot0 + w.split * split_stride, staged, kMI * (kAccs / 4) * kQuadBytes);
      bulk_commit_group();
      bulk_wait_group_all();
      fence_proxy_async_global();
      st_release_gpu(my_flag, load_epoch(smem.epoch_bar, smem.epoch_word));
    }
  } else {
    store_partials(slot0 + w.split * split_stride, acc, c.thread);
    named_barrier_sync(1 + c.consumer, 128);
    if (c.thread == 0) st_release_gpu(my_flag, load_epoch(smem.epoch_bar, smem.epoch_word));
  }
  if (marks) trace_mark(p.flags, kTracePublished);
  if (q_begin == q_end) return;  // more splits than quads: nothing to reduce
  if constexpr (K::kBulkPartials) {
    // Every split's stripe in the consumer's half of the ring, slot z for split z: the others
    // bulk-loaded once both consumers' stores have completed (each thread 0 waited before this
    // barrier), this unit's own written from its registers meanwhile.
    const int width = q_end - q_begin;
    if (p.num_splits * kMI * width * kQuadBytes <= K::kRingBytes / K::kConsumers) {
      const unsigned int stripes = smem.a + c.consumer * (K::kRingBytes / K::kConsumers);
      const unsigned int bar = smem.stripe_bars + 8 * c.consumer;
      named_barrier_sync(kPartialsBarrier, 128 * K::kConsumers);
      if (c.thread == 0) {
        wait_flags(flag0, s.tiles * K::kConsumers, p.num_splits, w.split, smem.epoch_bar,
                   smem.epoch_word);
        fence_proxy_async_global();
        mbarrier_arrive_expect_tx(bar, (p.num_splits - 1) * kMI * width * kQuadBytes);
        bulk_load_stripes<kMI, kAccs / 4>(stripes, slot0, split_stride, p.num_splits, w.split,
                                          q_begin, q_end, bar);
      }
      const unsigned int base = stripes - q_begin * kQuadBytes + c.thread * 16;
      stage_own_stripe(base, w.split, q_begin, q_end, acc);
      mbarrier_wait(bar, 0);  // its only phase in the launch
      if (marks) trace_mark(p.flags, kTraceFlagsReady);
      const auto load = [&](int z, int mi, int q, float(&t)[4]) {
        ld_shared_v4f32(stripe_address<kMI>(base, z, mi, q, width), t[0], t[1], t[2], t[3]);
      };
      sum_quads<K::kSwapAB, kMI, sum_batch<kMI * kAccs>()>(load, p.num_splits, q_begin, q_end,
                                                           stripe_out<K>(p, w, c));
      if (marks) trace_mark(p.flags, kTraceStored);
      return;
    }
  }
  wait_flags(flag0, s.tiles * K::kConsumers, p.num_splits, w.split, smem.epoch_bar,
             smem.epoch_word);
  if (marks) trace_mark(p.flags, kTraceFlagsReady);
  const float* const src0 = slot0 + c.thread * 4;
  const auto load = [&](int z, int mi, int q, float(&t)[4]) {
    ld_global_cg_v4f32(src0 + partial_float4<kAccs>(mi, q, 0) * 4 + z * split_stride, t[0], t[1],
                       t[2], t[3]);
  };
  sum_quads<K::kSwapAB, kMI, sum_batch<kMI * kAccs>()>(load, p.num_splits, q_begin, q_end,
                                                       stripe_out<K>(p, w, c));
  if (marks) trace_mark(p.flags, kTraceStored);
}

}  // namespace sm90
}  // namespace kt
