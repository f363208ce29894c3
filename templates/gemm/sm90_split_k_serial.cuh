// The sm90 GEMM's serial split-K through L2 (kSplitK, kClusterK == 1, more units than the
// grid's clusters): the units of splits 0 .. S - 2 publish their partial sums, the unit of split
// S - 1 adds them in split order and runs the epilogue. Its ordering, epoch and deadlock
// argument, below, hold for the distributed mode (sm90_split_k_distributed.cuh) too.
//
//  * Roles, serial. Units of splits 0 .. S - 2 (S = num_splits) are writers: each consumer
//    stores its accumulators to the tile's slot for that split (params.gemm.workspace, slot (z *
//    tiles + tile) of tile_m * tile_n floats, the consumer's half at consumer * rows * tile_n) in
//    fragment order (store_partials), then publishes its ready flag (params.gemm.flags, word
//    kFlagHeaderWords + (z * tiles + tile) * kConsumers + consumer), and stores no C. The unit of
//    split S - 1 is the tile's reducer: after its own main loop each consumer waits for the flags
//    of splits 0, 1, .., S - 2 in that order, adds each split's partial sums into its registers
//    as soon as its flag is up, then runs the epilogue of an unsplit unit. The sum is
//    ((own + p0) + p1) + .. + p(S-2) in FP32 whatever the timing: bitwise reproducible.
//  * Ordering. Writer: every thread's partial-sum stores; a named barrier over the consumer's
//    128 threads (CTA-scope synchronization: their stores happen before what thread 0 does
//    after it); thread 0's st.release.gpu of the flag (release at GPU scope, so the stores,
//    ordered before it by the barrier, happen before any acquire that reads the flag: causality
//    order is transitive). Reducer: each thread spins with ld.acquire.gpu until the flag holds
//    this launch's epoch, so its loads of the slot after that see the partial sums (they are
//    L2-only loads, .cg: nothing stale in L1). A slot and its flag are written once per launch
//    and read (by one reducer, or in the distributed mode by the S - 1 other units of the tile,
//    each its own stripe) only after the write; the next launch touches them only after this one
//    has completed (stream order). The distributed mode orders its stores, barrier and release
//    alike; its units poll all the other splits' flags with relaxed loads issued together and,
//    once every flag holds the epoch, a fence.acq_rel.gpu makes those loads acquire. Both
//    reductions issue a batch of partial-sum loads before adding the first (reduce_batch).
//  * Flags carry an epoch, so they never need a reset pass. The flag region is zeroed once when
//    the workspace is allocated (rt::clear_gemm_workspace_flags) and only ever holds epochs.
//    Thread 32 of every CTA (the producer warpgroup's idle warp 1) reads the last launch's epoch
//    E from flags[0] and shares E + 1 (0 skipped on wrap) as this launch's: it stores it in
//    shared memory and arrives on an mbarrier whose phase 0 the consumers wait for where they
//    read it (load_epoch), so no consumer waits for it before it publishes; the last CTA to
//    arrive stores it back (begin_launch). Writers store the epoch, the reducer waits for
//    equality: any value a flag holds from an earlier launch (of any config sharing the
//    workspace) is an older epoch, so it never passes for this launch's. The epoch lives in the
//    workspace rather than in the parameters, so a parameter block (or a CUDA graph replaying
//    one) may be launched any number of times. A launch that returns early (the test fault)
//    reads and writes no flag.
//  * Deadlock freedom. A reducer waits only for units of its tile with a smaller split, i.e. a
//    smaller unit index (the split is the slowest index of `unit`, and the tile of an index is
//    the same for every split). Every CTA (cluster) walks its units in increasing index order,
//    and every CTA of the grid is resident at once: the grid is at most one CTA per SM (one fits,
//    validate() checks shared memory and registers) and, for clusters, at most the clusters the
//    device holds at once (cuOccupancyMaxActiveClusters, GemmKernel). By induction on the unit
//    index every unit completes: when all smaller units have, the CTA (and its cluster peer,
//    which walks the same indices) has finished its earlier units, so the unit's main loop gets
//    its stages as in the unsplit kernel, and the flags it waits for belong to smaller units,
//    whose writers have published them. Producers run ahead of their consumers, but only on
//    their own CTA's ring, which a waiting reducer has already released.
//    Distributed mode: a unit waits for units of larger index too, but every unit is running at
//    once (its CTA, or cluster, has no other unit, and the whole grid is resident, as above),
//    and no unit waits before it has published its own flag: each unit's main loop needs only
//    its own CTA's (and cluster peer's, which works on the same unit index) stages, so every
//    unit publishes, and then every wait ends. A cluster CTA without a tile publishes nothing
//    and nothing waits for it (flags belong to tiles inside C).
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_flags.cuh"
#include "kerntune/gemm/sm90_partials.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_traits.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// Where consumer `consumer`'s partial sums and ready flags lie for unit w's tile, through L2:
// slot (z * tiles + tile) of kTileM * kTileN floats at `slots` (the consumer's part of each), its
// flag at flags + (z * tiles + tile) * kConsumers, for split z.
struct SplitKSlots {
  int tiles;
  int tile;
  float* slots;
  unsigned int* flags;
};

template <typename K>
__device__ __forceinline__ SplitKSlots split_k_slots(const GemmParams& p, const WorkUnit& w,
                                                     int consumer) {
  SplitKSlots s;
  s.tiles = p.tiles_m * p.tiles_n;
  s.tile = w.tile_m * p.tiles_n + w.tile_n;
  s.slots = p.workspace + consumer * (K::kRowsPerConsumer * K::kTileN);
  s.flags = p.flags + kFlagHeaderWords + consumer;
  return s;
}

// Serial split-K for consumer thread c of unit w: a writer (split < S - 1) publishes its partial
// sums and returns true (nothing to store); the reducer adds every other split's partial sums to
// acc in split order and returns false (the epilogue stores acc). `marks`: stamp the trace.
template <typename K>
__device__ __forceinline__ bool serial_split_k(const GemmParams& p, const SmemLayout<K>& smem,
                                               const WorkUnit& w, const SplitKSlots& s,
                                               float (&acc)[K::kMI][K::kAccs],
                                               const ConsumerThread& c, bool marks) {
  if (w.split < p.num_splits - 1) {
    const int slot = w.split * s.tiles + s.tile;
    store_partials(s.slots + static_cast<long long>(slot) * (K::kTileM * K::kTileN), acc, c.thread);
    named_barrier_sync(1 + c.consumer, 128);
    if (c.thread == 0)
      st_release_gpu(s.flags + slot * K::kConsumers, load_epoch(smem.epoch_bar, smem.epoch_word));
    if (marks) trace_mark(p.flags, kTracePublished);
    return true;
  }
  const float* slot = s.slots + static_cast<long long>(s.tile) * (K::kTileM * K::kTileN);
  const unsigned int* flag = s.flags + s.tile * K::kConsumers;
  for (int z = 0; z < p.num_splits - 1; ++z) {  // slot and flag of (tile, split z)
    wait_flag(flag, smem.epoch_bar, smem.epoch_word);
    add_partials(slot, acc, c.thread);
    slot += static_cast<long long>(s.tiles) * (K::kTileM * K::kTileN);
    flag += s.tiles * K::kConsumers;
  }
  return false;
}

}  // namespace sm90
}  // namespace kt
