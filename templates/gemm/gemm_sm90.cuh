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
// name expressions (kt::gemm_sm90<...>). Its device helpers: sm90_work_units.cuh (which tile, split
// or piece a unit is), sm90_flags.cuh (the workspace's flags and epoch), sm90_partials.cuh (split-K
// partial sums and their reduction), sm90_store.cuh (direct stores of C), sm90_trace.cuh.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/common/wgmma_slab.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_flags.cuh"
#include "kerntune/gemm/sm90_partials.cuh"
#include "kerntune/gemm/sm90_store.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// K depth of a swizzle atom: one 128-byte swizzle row of 16-bit elements, so every operand tile
// is one TMA box per atom along K and per 64 rows or columns, and a k16 step is a +32 B
// (K-major) or +2048 B (N-major) move. A stage holds one atom along K, or (kTileK 128 or 256,
// nt) two or four.
constexpr int kAtomK = 64;
constexpr int kRowBytes = kAtomK * 2;

// Register split of the two-consumer CTA (384 threads, 168 registers each at launch):
// 40 + 2 x 232 = 3 x 168, so the consumers' increase is exactly what the producer gives up.
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

// A consumer warpgroup's release of a stage: one arrival on the empty barrier `bar` of every CTA
// of the cluster. Threads 0 .. kCluster - 1 (lanes of warp 0) arrive on CTA `thread`, so the
// arrivals of a cluster go out as one instruction.
template <int kCluster>
__device__ __forceinline__ void release_stage(unsigned int bar, int thread) {
  if constexpr (kCluster > 1) {
    if (thread < kCluster) mbarrier_arrive_cluster(bar, static_cast<unsigned int>(thread));
  } else {
    if (thread == 0) mbarrier_arrive(bar);
  }
}

}  // namespace sm90

// C[m, n] = A[m, k] · B with FP32 accumulation (operand layouts: GemmParams). A CTA has one
// producer warpgroup (kWarpSpecialized; without it, consumer 0's thread 0 issues the loads) and
// kConsumers consumer warpgroups; it computes kTileM x kTileN tiles, each
// consumer kTileM / kConsumers rows of them (64 or 128, one m64 wgmma per 64 rows) by kTileN
// columns. params.a_map: A as {K, M} (innermost first), box {64, kTileM / kClusterN}.
// params.b_map: for kBIsNxK ("nt"), B as {K, N}, box {64, kTileN / kCluster}; otherwise ("nn"), B
// as {N, K}, box {64, 64 / kCluster}. Both 128B-swizzled, OOB fill zero; the host guarantees
// 16-byte row strides (K % 8 == 0, and N % 8 == 0 for nn) and 16-byte aligned operands.
// kEpilogueSlots == 0: consumers store C from registers. > 0: they stage column slabs of their
// rows in that many 1024-byte-aligned shared buffers and TMA-store them through params.c_map
// (C as {N, M}, box {kSlabCols, kTileM / kConsumers}: 128 bytes wide and 128B-swizzled, or for
// 144- and 32-column tiles half the tile wide and unswizzled; needs N * sizeof(TOut) % 16 == 0);
// the stores drain while the next tile's main loop runs. kCluster == 2: clusters of two CTAs on
// vertically adjacent tiles; each CTA loads half of the shared B tile and multicasts it to both.
// kClusterN == 2: clusters of two CTAs on horizontally adjacent tiles sharing A the same way (a
// decode step's weight tile, swapped, for two token tiles; cuBLASLt's 1x2 clusters).
// kSplitK: the unit of split z of a tile sums K range [z * k_per_split, min(k, (z + 1) *
// k_per_split)); the tile is reduced in the kernel (below). kSwapAB (swap-AB, nt, direct stores):
// the host passes the caller's B as A and its A as B, m and n exchanged, so the kernel computes
// C^T = B·A^T with the weights of a decode step on the wgmma M side and its few tokens on the N
// side (16 to 64 columns); element (i, j) of that product is stored at c[j * ldc + i].
// kTileK: the K depth of a stage, 64 (one swizzle atom) or, for nt, 128 or 256: two or four
// boxes of each operand a stage, so a small tile's ring turns over fewer stages (each costs a
// producer/consumer round trip, whatever the stage's bytes) for the same bytes in flight. Launch:
// 128 * (kConsumers + kWarpSpecialized) threads, cluster (kCluster * kClusterN * kClusterK, 1, 1),
// any grid that is a multiple of the cluster (clusters loop over ceil(tiles_m / kCluster) *
// ceil(tiles_n / kClusterN) * num_splits / kClusterK units; with split-K through L2 every CTA of
// the grid must be resident at once), smem_bytes() (gemm_config.hpp) of dynamic shared memory.
//
// Split-K (kSplitK), with no second kernel and no FP32 pass over C. Through L2 (kClusterK == 1),
// two modes, chosen at run time and uniformly for the launch: distributed when every unit has a
// CTA (cluster) of its own (num_units <= the clusters of the grid, so each runs at most one unit
// and all splits of a tile run at once; and the last split's flags fit the flag region, which in
// practice they always do), serial otherwise. Through distributed shared memory (kClusterK > 1):
// cluster split-K, below.
//  * Roles, serial. Units of splits 0 .. S - 2 (S = num_splits) are writers: each consumer
//    stores its accumulators to the tile's slot for that split (params.gemm.workspace, slot (z *
//    tiles + tile) of tile_m * tile_n floats, the consumer's half at consumer * rows * tile_n) in
//    fragment order (store_partials), then publishes its ready flag (params.gemm.flags, word
//    kFlagHeaderWords + (z * tiles + tile) * kConsumers + consumer), and stores no C. The unit of
//    split S - 1 is the tile's reducer: after its own main loop each consumer waits for the flags
//    of splits 0, 1, .., S - 2 in that order, adds each split's partial sums into its registers
//    as soon as its flag is up, then runs the epilogue of an unsplit unit. The sum is
//    ((own + p0) + p1) + .. + p(S-2) in FP32 whatever the timing: bitwise reproducible.
//  * Roles, distributed. Every unit, split z of S, owns a stripe of the tile's columns: the
//    accumulator quads [z * Q / S, (z + 1) * Q / S) of each m64 tile (Q = kAccs / 4, quad q =
//    n8 column block q; some splits own none when S > Q). Each consumer stores all of its
//    accumulators but its stripe to the slot of (tile, z) (the workspace has a slot per (tile,
//    split)), publishes its flag (word of (tile, z), the last split's too), waits for the flags
//    of every other split of the tile and sums its stripe in the serial reducer's order,
//    ((p(S-1) + p0) + p1) + .. + p(S-2), its own p(z) from registers (reduce_slice: per quad,
//    runtime loops over the splits with unrolled quads under a predicate, so no register array
//    is indexed at run time), then stores that stripe of C directly (store_pair_masked) whatever
//    kEpilogueSlots is: the TMA-store epilogue is not used for these units. Each CTA so loads
//    (S - 1) / S of one partial tile instead of the reducer's S - 1 tiles, and both modes give
//    bitwise the same C. With kBulkPartials the partial sums move by bulk copies instead of each
//    thread's 16-byte accesses (the same slots and layout, so the same sums): the ring is idle
//    (the CTA's only unit is done), each consumer stages its accumulators there, its thread 0
//    bulk-stores all but the stripe and publishes once the writes are complete; later that thread
//    polls the flags and bulk-loads the other splits' stripes into the consumer's half of the
//    ring while each thread writes its own stripe there from its registers, and the consumer
//    sums every split's stripe from shared memory (sum_stripe: no selection between registers
//    and loads, so about a third of reduce_slice's instructions).
//  * Cluster split-K (kClusterK = S > 1, key field clkS): the S splits of a tile are the S CTAs
//    of one cluster (split = rank), a unit is a whole tile, and no CTA waits for anything outside
//    its cluster: no workspace, flags or epoch, and no residency requirement. After a unit's main
//    loop every thread of the CTA meets a named barrier (A: the ring is no longer read), each
//    consumer stages its accumulators over the ring in store_partials' layout, a cluster barrier
//    (B: release/acquire at cluster scope) makes them visible to the peers, and each CTA sums its
//    stripe of columns (the distributed mode's quads and order, so bitwise the same C) reading the
//    peers' shared memory (ld.shared::cluster), stores it directly and meets a last cluster
//    barrier (C: no peer still reads the ring when the producer loads the next unit into it, or
//    when the CTA exits). The producer warpgroup meets the same three barriers after each unit.
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
// split-K's (above). Deadlock freedom: a CTA's whole units and a publishing piece wait for
// nothing, and an owner waits only for publishing pieces, which are the first pieces of their
// CTAs; every CTA of the grid is resident (one per SM, no clusters). A CTA's slot and flag are
// written once a launch.
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
//  * Bulk partial sums (distributed split-K, kBulkPartials): named barrier kPartialsBarrier over
//    every consumer thread precedes the staging (no wgmma reads the ring any more; every TMA
//    write to it has completed, as each full barrier was waited) and the stripes' loads (each
//    consumer's thread 0 arrives only after its bulk stores completed, so no bulk store still
//    reads the ring); generic writes of the staging are fenced to the async proxy before the
//    bulk store, which completes (wait_group 0) and is fenced (fence.proxy.async.global) before
//    the release of the flag; the loads follow the flags' acquire and a proxy fence and complete
//    on the consumer's stripes mbarrier, whose only phase (0) every consumer thread waits for.
//    Each thread writes its own stripe's float4s (generic stores, after the same barrier) into
//    the slot no bulk load writes, and reads back only its own float4s, so no fence is needed.
//  * Epilogue slots: a consumer's thread 0 issues every TMA store of the consumer; before slot
//    (count % kEpilogueSlots) is rewritten it waits until at most kEpilogueSlots - 1 of its bulk
//    groups are still reading, i.e. the group that last used the slot is done; a named barrier
//    then releases the warpgroup's writes, each writer fences generic -> async proxy, and a second
//    named barrier precedes the store. Thread 0 waits for all of its groups before exit.
template <typename TIn, typename TOut, int kTileM, int kTileN, int kTileK, int kStages,
          int kConsumers, bool kBIsNxK, bool kSplitK, int kEpilogueSlots, int kCluster,
          int kClusterK, bool kSwapAB, int kClusterN, bool kStreamK, bool kWarpSpecialized>
__global__ void __launch_bounds__(128 * (kConsumers + (kWarpSpecialized ? 1 : 0)), 1)
    gemm_sm90(const __grid_constant__ GemmSm90Params params) {
  static_assert(DTypeTraits<TIn>::kIsMmaOperand, "TIn must be kt::bf16 or kt::fp16");
  static_assert(sizeof(TOut) == 2 || sizeof(TOut) == 4, "TOut must be kt::bf16, kt::fp16 or float");
  static_assert(kConsumers == 1 || kConsumers == 2, "one or two consumer warpgroups");
  static_assert(kTileM == 64 * kConsumers || kTileM == 128 * kConsumers,
                "each consumer owns 64 or 128 rows");
  // 144 columns (12 x 11 tiles of 128 x 144 fill 132 SMs at 1536 x 1536) and 32 (128 CTAs of
  // 64 x 32 stream the weights of a 64 x 4096 x 4096 decode step without split-K) only where
  // whole 64-column atoms of B are not needed: nt's B box rows. Their TMA-store epilogue stages
  // two unswizzled half-tile slabs.
  // 16 for swap-AB decode steps: 16 tokens on the wgmma N side.
  static_assert((kTileN % 64 == 0 && kTileN <= 256) ||
                    ((kTileN == 144 || kTileN == 32 || kTileN == 16) && kBIsNxK),
                "kTileN must be 64, 128, 192 or 256 (or 16, 32 or 144 with nt)");
  static_assert(kTileM / kConsumers / 64 * kTileN / 2 <= 128,
                "at most 128 accumulators per thread");
  static_assert(kTileK == sm90::kAtomK ||
                    ((kTileK == 2 * sm90::kAtomK || kTileK == 4 * sm90::kAtomK) && kBIsNxK),
                "a stage is one 64-deep swizzle atom along K, or two or four with nt");
  static_assert(kStages >= 2 && kStages <= 16, "kStages must be in [2, 16]");
  static_assert(kEpilogueSlots >= 0 && kEpilogueSlots <= 8, "kEpilogueSlots must be in [0, 8]");
  static_assert(kCluster == 1 || kCluster == 2, "clusters of one or two CTAs");
  static_assert(kClusterN == 1 || (kClusterN == 2 && kCluster == 1 && kClusterK == 1),
                "pairs along N (sharing A): two CTAs, no cluster along M or K as well");
  static_assert(kClusterK == 1 || (kSplitK && kCluster == 1 && kEpilogueSlots == 0 &&
                                   kClusterK >= 2 && kClusterK <= 8),
                "cluster split-K: 2 to 8 splits, no cluster along M, direct stores");
  static_assert(!kSwapAB || (kBIsNxK && kEpilogueSlots == 0),
                "swap-AB: both operands K-major (nt), direct (transposed) stores");
  static_assert(!kStreamK || (!kSplitK && kCluster == 1 && kClusterN == 1 && !kSwapAB),
                "stream-K: no split-K, clusters or swap-AB");
  static_assert(kWarpSpecialized || (!kSplitK && !kStreamK && kCluster == 1 && kClusterN == 1 &&
                                     kClusterK == 1 && !kSwapAB),
                "without a producer warpgroup: no split-K, stream-K, clusters or swap-AB");

  if (test_fault(params.gemm.c)) return;
  if (threadIdx.x == 0) {
    sm90::trace_mark(params.gemm.flags, kTraceEntry);
    sm90::trace_cycles(params.gemm.flags, kTraceEntryCycles);
    sm90::trace_sm_id(params.gemm.flags);
    // The descriptors' fetch overlaps the barriers' set-up rather than the first loads (cheap;
    // no measurable gain).
    prefetch_tensor_map(&params.a_map);
    prefetch_tensor_map(&params.b_map);
    if constexpr (kEpilogueSlots > 0) prefetch_tensor_map(&params.c_map);
  }

  constexpr int kRowsPerConsumer = kTileM / kConsumers;
  constexpr int kMI = kRowsPerConsumer / 64;      // m64 wgmma tiles per consumer
  constexpr int kAccs = kTileN / 2;               // FP32 accumulators per thread per m64 tile
  constexpr int kKAtoms = kTileK / sm90::kAtomK;  // swizzle atoms along K per stage
  constexpr int kKSteps = sm90::kAtomK / 16;      // k16 steps per atom
  constexpr int kAKAtomBytes = kTileM * sm90::kRowBytes;  // A (and nt B) atoms along K
  constexpr int kBKAtomBytes = kTileN * sm90::kRowBytes;
  constexpr int kAStageBytes = kKAtoms * kAKAtomBytes;
  constexpr int kBStageBytes = kKAtoms * kBKAtomBytes;
  constexpr int kBAtomBytes = sm90::kAtomK * sm90::kRowBytes;  // nn: 64 K-rows of 64 columns
  // Epilogue: columns, row bytes and count of the staged slabs. Tiles whose rows are whole
  // 128-byte multiples stage 128-byte-wide slabs in the 128B swizzle; the others (144 and 32
  // columns of 16-bit C, 144 of FP32) two half-tile slabs, unswizzled (the host's
  // sm90_slab_columns, which sizes the c_map box, is the same rule).
  constexpr int kSlabCols =
      kTileN * int(sizeof(TOut)) % 128 == 0 ? 128 / int(sizeof(TOut)) : kTileN / 2;
  constexpr int kSlabRowBytes = kSlabCols * int(sizeof(TOut));
  constexpr int kSlabs = kTileN / kSlabCols;
  constexpr int kSlabBytes = kRowsPerConsumer * kSlabRowBytes;
  static_assert(kSlabBytes % 1024 == 0, "epilogue slots keep the stages 1024-byte aligned");
  constexpr int kEpilogueBytes = kConsumers * kEpilogueSlots * kSlabBytes;

  // NOTE: the 128B swizzle is a function of absolute shared addresses, so the stages and the
  // epilogue slabs must start on 1024-byte boundaries (all their sizes are multiples of 1024);
  // the host adds 1024 bytes of slack for this alignment. A cluster's CTAs share this layout, so
  // a multicast lands at the same offsets in both.
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned int smem_a = (shared_address(smem_raw) + 1023u) & ~1023u;
  const unsigned int smem_b = smem_a + kStages * kAStageBytes;
  const unsigned int smem_c = smem_b + kStages * kBStageBytes;
  const unsigned int full_bars = smem_c + kEpilogueBytes;   // TMA bytes have landed
  const unsigned int empty_bars = full_bars + kStages * 8;  // every consumer is done
  // Split-K: this launch's epoch and the mbarrier that publishes it (begin_launch). They lie in
  // the 1024 bytes of alignment slack, of which at least 16 are past the barriers (the dynamic
  // base is 16-byte aligned).
  const unsigned int epoch_bar = empty_bars + kStages * 8;
  const unsigned int epoch_word = epoch_bar + 8;
  // Distributed split-K by bulk copies: each consumer's mbarrier for its peers' stripes (16 more
  // bytes, which smem_bytes adds for split-K configs); stream-K uses them for the partial tiles
  // its owner loads, and each consumer's mbarrier for its publishing piece's stores (16 more).
  const unsigned int stripe_bars = epoch_bar + 16;
  const unsigned int publish_bars = stripe_bars + 16;

  // Cluster split-K: each consumer's FP32 partial tile, staged over the ring after its main loop.
  constexpr int kRingBytes = kStages * (kAStageBytes + kBStageBytes);
  static_assert(kClusterK == 1 || kTileM * kTileN * 4 <= kRingBytes,
                "cluster split-K stages the partial tile in the ring");
  static_assert(!kStreamK || kTileM * kTileN * 4 <= kRingBytes,
                "stream-K: an owner stages its peers' FP32 partial tiles over the ring");
  // Distributed split-K moves partial sums by bulk copies through the ring when the FP32 tile
  // fits it, beside fewer than 128 accumulators per thread (with 128, ptxas spills around the
  // bulk path's staging and shared-memory sum); otherwise, and in serial mode, by each thread's
  // 16-byte loads and stores.
  constexpr bool kBulkPartials =
      kSplitK && kClusterK == 1 && kTileM * kTileN * 4 <= kRingBytes && kMI * kAccs < 128;
  // CTAs that share each stage's loads (one multicasts half of B, or of A, to the other).
  constexpr int kPair = kCluster * kClusterN;
  constexpr bool kInCluster = kPair * kClusterK > 1;
  // Ready flags in the workspace, and so the launch epoch: split-K through L2, stream-K.
  constexpr bool kL2Flags = (kSplitK && kClusterK == 1) || kStreamK;

  const GemmParams& p = params.gemm;
  const int rank = kInCluster ? int(cluster_ctarank()) : 0;
  if (threadIdx.x == 0) {
#pragma unroll 1
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full_bars + 8 * s, 1);
      mbarrier_init(empty_bars + 8 * s, kConsumers * kPair);
    }
    if constexpr (kL2Flags) mbarrier_init(epoch_bar, 1);
    if constexpr (kBulkPartials || kStreamK)
      for (int c = 0; c < kConsumers; ++c) mbarrier_init(stripe_bars + 8 * c, 1);
    if constexpr (kStreamK)
      for (int c = 0; c < kConsumers; ++c) mbarrier_init(publish_bars + 8 * c, 128);
    fence_mbarrier_init();
  }
  if constexpr (kPair > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  const int cluster_rows = (p.tiles_m + kCluster - 1) / kCluster;
  const int cluster_cols = (p.tiles_n + kClusterN - 1) / kClusterN;
  int num_units = cluster_rows * cluster_cols * (kSplitK && kClusterK == 1 ? p.num_splits : 1);
  const int first_unit = kInCluster ? int(cluster_id_x()) : int(blockIdx.x);
  const int unit_stride = kInCluster ? int(cluster_count_x()) : int(gridDim.x);
  // Stream-K: the whole units (the same number on every CTA), then each CTA's pieces, at most
  // sk_iters / k_tiles + 2 (one per tile its range touches).
  int dp_units = num_units;
  if constexpr (kStreamK) {
    if (p.sk_units > 0) {
      dp_units = num_units - p.sk_units;
      num_units = dp_units + unit_stride * (p.sk_iters / ((p.k + kTileK - 1) / kTileK) + 2);
    }
  }
  const int warpgroup = threadIdx.x / 128;

  // What the loading thread issues for a unit: the corner of its operand tiles, one stage's
  // bytes, its k-tiles and their order.
  struct UnitLoads {
    int m0, n0, b_atoms, k_begin, k_tiles;
    unsigned int stage_bytes;
    bool downward;
  };
  const auto unit_loads = [&](const sm90::WorkUnit& w, int wave) {
    UnitLoads u;
    // A CTA without a tile loads its peer's A rows (B columns with kClusterN: in bounds, L2-hot);
    // nothing is stored.
    const bool peer_rows = !w.has_tile && kCluster > 1;
    const bool peer_cols = !w.has_tile && kClusterN > 1;
    u.m0 = (peer_rows ? w.tile_m - 1 : w.tile_m) * kTileM;
    u.n0 = (peer_cols ? w.tile_n - 1 : w.tile_n) * kTileN;
    // nn: 64-column atoms wholly right of N are not loaded; their stale shared memory only feeds
    // columns of C that are never stored. (Partial boxes are zero-filled and count whole.) The
    // count depends on n0 only, so both CTAs of a cluster agree on it.
    u.b_atoms = kTileN / 64;
    if constexpr (!kBIsNxK) {
      const int atoms_left = (p.n - u.n0 + 63) / 64;
      if (atoms_left < u.b_atoms) u.b_atoms = atoms_left;
    }
    // nt loads B as one box of kTileN rows (144 is not a whole number of 64-row atoms).
    u.stage_bytes = kAStageBytes + (kBIsNxK ? kBStageBytes : u.b_atoms * kBAtomBytes);
    // Serpentine K: the CTAs run their units in lockstep waves, and a wave's units share operand
    // blocks with the previous wave's (A's rows within a raster group; at 4096^3 all of B), so
    // odd waves walk K downward and start on the K slices the last wave read most recently,
    // which L2 still holds. Not with split-K, whose orders the reductions' bitwise agreement
    // across modes relies on (and whose few tiles make one wave). Stream-K pieces all walk
    // downward: every CTA's range has the same length, so the first pieces (which end their
    // tiles) start together at the last k-tile and the last pieces (which start theirs) end
    // together at the first, each group in step along K.
    u.k_begin = w.k_begin;
    u.k_tiles = (w.k_end - w.k_begin + kTileK - 1) / kTileK;
    u.downward = (!kSplitK && (wave & 1) != 0) || (kStreamK && w.sk_tile >= 0);
    return u;
  };
  // The i-th k-tile of a unit into `stage` once every consumer has released the stage's last
  // use (`phase`: the parity of the stage's uses so far; a fresh stage passes at once).
  const auto load_k_tile = [&](const UnitLoads& u, int i, int stage, unsigned int phase) {
    mbarrier_wait(empty_bars + 8 * stage, phase ^ 1);
    const int k = u.k_begin + (u.downward ? u.k_tiles - 1 - i : i) * kTileK;
    const unsigned int full = full_bars + 8 * stage;
    const unsigned int b_stage = smem_b + stage * kBStageBytes;
    mbarrier_arrive_expect_tx(full, u.stage_bytes);
    // Several atoms along K (kTileK 128, 256): the later boxes may lie wholly past K; TMA fills
    // them with zeros and counts their bytes like any other.
    if constexpr (kClusterN == 1) {
#pragma unroll
      for (int j = 0; j < kKAtoms; ++j)
        tma_load_2d(smem_a + stage * kAStageBytes + j * kAKAtomBytes, &params.a_map,
                    k + sm90::kAtomK * j, u.m0, full);
    } else {
      // Half of A each (rows [m0 + rank * kTileM / 2, ...): 32 or 64 rows, whole swizzle
      // periods), multicast to both CTAs.
#pragma unroll
      for (int j = 0; j < kKAtoms; ++j)
        tma_load_2d_multicast(
            smem_a + stage * kAStageBytes + j * kAKAtomBytes + rank * (kAKAtomBytes / 2),
            &params.a_map, k + sm90::kAtomK * j, u.m0 + rank * (kTileM / 2), full, 0x3);
    }
    if constexpr (kCluster == 1) {
      if constexpr (kBIsNxK) {
#pragma unroll
        for (int j = 0; j < kKAtoms; ++j)
          tma_load_2d(b_stage + j * kBKAtomBytes, &params.b_map, k + sm90::kAtomK * j, u.n0, full);
      } else {
        for (int j = 0; j < u.b_atoms; ++j)
          tma_load_2d(b_stage + j * kBAtomBytes, &params.b_map, u.n0 + 64 * j, k, full);
      }
    } else {
      // Half of B each, multicast to both CTAs: nt, rows [n0 + rank * kTileN / 2, ...); nn, K
      // rows [k + 32 rank, k + 32 rank + 32) of every atom (32 rows = 4 whole swizzle periods,
      // so the halves tile the atom exactly).
      if constexpr (kBIsNxK) {
#pragma unroll
        for (int j = 0; j < kKAtoms; ++j)
          tma_load_2d_multicast(b_stage + j * kBKAtomBytes + rank * (kBKAtomBytes / 2),
                                &params.b_map, k + sm90::kAtomK * j, u.n0 + rank * (kTileN / 2),
                                full, 0x3);
      } else {
        for (int j = 0; j < u.b_atoms; ++j)
          tma_load_2d_multicast(b_stage + j * kBAtomBytes + rank * (kBAtomBytes / 2), &params.b_map,
                                u.n0 + 64 * j, k + 32 * rank, full, 0x3);
      }
    }
  };

  if (kWarpSpecialized && warpgroup == 0) {
    // Producer: one thread issues every TMA load of the CTA; with split-K through L2, warp 1
    // reads this launch's epoch (two global round trips that delay neither the loads nor the
    // consumers' main loop); the others idle to the end (cluster split-K: to its barriers).
    if constexpr (kConsumers == 2) setmaxnreg_dec<sm90::kProducerRegs>();
    if constexpr (kL2Flags) {
      if (threadIdx.x == 32) {
        sm90::begin_launch(p.flags, epoch_bar, epoch_word, gridDim.x);
        sm90::trace_mark(p.flags, kTraceEpochRead);
      }
    }
    if constexpr (kStreamK) {
      // Stream-K: this CTA's first piece publishes when it does not start its tile; thread 64
      // (idle warp 2) raises each consumer's flag once its 128 threads have arrived after their
      // stores, so the consumers go on to their next piece without waiting for the writes.
      if (threadIdx.x == 64 && p.sk_units > 0) {
        const sm90::WorkUnit w =
            sm90::stream_k_piece<kTileK>(dp_units + int(blockIdx.x), p, dp_units, unit_stride);
        if (w.k_end > w.k_begin && w.k_begin > 0) {
          for (int c = 0; c < kConsumers; ++c) {
            mbarrier_wait(publish_bars + 8 * c, 0);
            st_release_gpu(p.flags + sm90::kFlagHeaderWords + blockIdx.x * kConsumers + c,
                           sm90::load_epoch(epoch_bar, epoch_word));
          }
          sm90::trace_mark(p.flags, kTracePublished);
        }
      }
    }
    // Cluster split-K: every producer thread walks the units too, to meet the consumers' three
    // barriers after each (see cluster_split_barriers); thread 0 issues the loads.
    if (threadIdx.x == 0 || kClusterK > 1) {
      int stage = 0;
      unsigned int phase = 0;
      int wave = 0;  // the units this CTA walked before this one
      for (int unit = first_unit; unit < num_units; unit += unit_stride, ++wave) {
        const sm90::WorkUnit w = sm90::unit_at<kCluster, kClusterK, kClusterN, kStreamK, kTileK>(
            unit, p, kSplitK, rank, dp_units, unit_stride);
        if (threadIdx.x == 0) {
          const UnitLoads u = unit_loads(w, wave);
          for (int i = 0; i < u.k_tiles; ++i) {
            load_k_tile(u, i, stage, phase);
            if (unit == first_unit && i == 0) sm90::trace_mark(p.flags, kTraceFirstLoad);
            if (++stage == kStages) {
              stage = 0;
              phase ^= 1;
            }
          }
        }
        if constexpr (kClusterK > 1) {
          __syncwarp();
          sm90::cluster_split_barriers<kConsumers>();
        }
      }
      // Pairs: the producer tail (the invariants' "Cluster" item) — wait for the release of
      // every stage's last fill (a stage never filled passes at once), so that no peer's
      // remote arrival is still to come when the CTA exits.
      if constexpr (kPair > 1) {
        if (threadIdx.x == 0) {
#pragma unroll 1
          for (int s = stage; s < stage + kStages; ++s)
            mbarrier_wait(empty_bars + 8 * (s % kStages), phase ^ 1 ^ unsigned(s >= kStages));
        }
      }
    }
  } else {
    // Consumers: every warpgroup after the producer's, or every warpgroup without one.
    if constexpr (kWarpSpecialized && kConsumers == 2) setmaxnreg_inc<sm90::kConsumerRegs>();
    const int consumer = kWarpSpecialized ? warpgroup - 1 : warpgroup;
    const int thread = threadIdx.x % 128;
    const int warp = thread / 32;
    const int lane = thread % 32;
    const unsigned int my_slots = smem_c + consumer * kEpilogueSlots * kSlabBytes;
    int stores = 0;  // TMA stores this consumer issued; the next one uses slot stores % slots
    float acc[kMI][kAccs];
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int i = 0; i < kAccs; ++i) acc[mi][i] = 0.0f;

    // Without a producer warpgroup, thread 0 issues the loads itself along the same units:
    // kStages k-tiles before the first wgmma, then one each time its warpgroup releases a stage,
    // into the stage just released (so it waits there for every consumer's release).
    int load_unit = first_unit - unit_stride, load_wave = -1, load_i = 0, load_stage = 0;
    unsigned int load_phase = 0;
    UnitLoads loads{};
    const auto load_next = [&]() {
      if constexpr (!kWarpSpecialized) {
        if (threadIdx.x != 0) return;
        while (load_unit < num_units && load_i == loads.k_tiles) {
          load_unit += unit_stride;
          ++load_wave;
          load_i = 0;
          if (load_unit < num_units)
            loads = unit_loads(sm90::unit_at<kCluster, kClusterK, kClusterN, kStreamK, kTileK>(
                                   load_unit, p, kSplitK, rank, dp_units, unit_stride),
                               load_wave);
        }
        if (load_unit >= num_units) return;
        load_k_tile(loads, load_i, load_stage, load_phase);
        if (load_unit == first_unit && load_i == 0) sm90::trace_mark(p.flags, kTraceFirstLoad);
        ++load_i;
        if (++load_stage == kStages) {
          load_stage = 0;
          load_phase ^= 1;
        }
      }
    };
#pragma unroll 1
    for (int s = 0; s < (kWarpSpecialized ? 0 : kStages); ++s) load_next();

    int stage = 0;
    unsigned int phase = 0;
    for (int unit = first_unit; unit < num_units; unit += unit_stride) {
      const sm90::WorkUnit w = sm90::unit_at<kCluster, kClusterK, kClusterN, kStreamK, kTileK>(
          unit, p, kSplitK, rank, dp_units, unit_stride);
      if (kStreamK && w.k_end <= w.k_begin) continue;  // an empty stream-K piece
      const int num_k_tiles = (w.k_end - w.k_begin + kTileK - 1) / kTileK;
      int previous_stage = 0;
      for (int kt = 0; kt < num_k_tiles; ++kt) {
        mbarrier_wait(full_bars + 8 * stage, phase);
        if (kt == 0 && unit == first_unit && consumer == 0 && thread == 0)
          sm90::trace_mark(p.flags, kTraceFirstFull);
        const unsigned int a_tile =
            smem_a + stage * kAStageBytes + consumer * kRowsPerConsumer * sm90::kRowBytes;
        const unsigned int b_tile = smem_b + stage * kBStageBytes;
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi) fence_accumulators(acc[mi]);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < kKAtoms; ++j)
#pragma unroll
          for (int ks = 0; ks < kKSteps; ++ks) {
            const unsigned int a_atom = a_tile + j * kAKAtomBytes;
            const unsigned long long desc_b =
                kBIsNxK ? kmajor_descriptor(b_tile + j * kBKAtomBytes + 32 * ks)
                        : mnmajor_descriptor(b_tile + 2048 * ks, kBAtomBytes);
#pragma unroll
            for (int mi = 0; mi < kMI; ++mi) {
              // The first k16 step of a tile overwrites the previous tile's accumulators.
              wgmma_m64k16_ss<TIn, kTileN, kBIsNxK ? 0 : 1>(
                  acc[mi], kmajor_descriptor(a_atom + mi * 64 * sm90::kRowBytes + 32 * ks), desc_b,
                  kt > 0 || j > 0 || ks > 0);
            }
          }
        wgmma_commit();
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi) fence_accumulators(acc[mi]);
        // Keep this k-tile's wgmma in flight; the previous one is done, so its stage is free.
        wgmma_wait<1>();
        if (kt > 0) {
          sm90::release_stage<kPair>(empty_bars + 8 * previous_stage, thread);
          load_next();
        }
        previous_stage = stage;
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) fence_accumulators(acc[mi]);
      sm90::release_stage<kPair>(empty_bars + 8 * previous_stage, thread);
      load_next();
      const bool marks = unit == first_unit && consumer == 0 && thread == 0;
      if (marks) {
        sm90::trace_mark(p.flags, kTraceMainLoopDone);
        sm90::trace_cycles(p.flags, kTraceLoopCycles);
      }
      if (!w.has_tile) continue;

      if constexpr (kClusterK > 1) {
        // Cluster split-K (see "Split-K" above): the consumer stages its partial tile over the
        // ring, then sums this CTA's stripe of columns from every split's shared memory.
        const unsigned int partials = smem_a + consumer * (kRowsPerConsumer * kTileN * 4);
        named_barrier_sync(sm90::kUnitBarrier, 128 * (kConsumers + 1));  // (A)
        sm90::stage_partials(partials, acc, thread);
        fence_proxy_async_shared();  // generic writes over the ring, which TMA writes next
        cluster_sync();              // (B)
        if (marks) sm90::trace_mark(p.flags, kTracePublished);
        int q_begin = 0, q_end = 0;
        sm90::slice_quads(w.split, kClusterK, kAccs / 4, q_begin, q_end);
        if (q_begin < q_end) {
          const unsigned int mine = partials + thread * 16;
          const auto load = [&](int z, int offset, float(&t)[4]) {
            ld_shared_cluster_v4f32(map_shared_rank(mine + offset * 4, unsigned(z)), t[0], t[1],
                                    t[2], t[3]);
          };
          sm90::reduce_slice<kSwapAB>(load, w.split, kClusterK, q_begin, q_end, acc,
                                      sm90::stripe_out<TOut, kTileM, kTileN, kConsumers, kSwapAB>(
                                          p, w, consumer, warp, lane));
        }
        if (marks) sm90::trace_mark(p.flags, kTraceStored);
        cluster_sync();  // (C)
        continue;
      }
      if constexpr (kStreamK) {
        if (w.sk_tile >= 0) {
          // A piece that does not start its tile publishes its partial sums in its CTA's slot
          // and moves on (thread 64 raises the flag); the piece that starts it adds the other
          // pieces' partial sums, in CTA order, then stores C (see "Stream-K" above).
          constexpr long long kSlotFloats = kTileM * kTileN;
          constexpr unsigned int kConsumerBytes = kRowsPerConsumer * kTileN * 4;
          float* const slots = p.workspace + consumer * (kRowsPerConsumer * kTileN);
          if (w.k_begin > 0) {
            sm90::store_partials(slots + blockIdx.x * kSlotFloats, acc, thread);
            mbarrier_arrive(publish_bars + 8 * consumer);
            continue;
          }
          const unsigned int* const flags = p.flags + sm90::kFlagHeaderWords + consumer;
          const int k_tiles = (p.k + kTileK - 1) / kTileK;
          const int tile_end = (w.sk_tile + 1) * k_tiles;
          // The peers: the CTAs whose ranges start inside the tile, after its first k-tile (all
          // below the grid's size: the ranges cover the units' k-tiles).
          const int first_peer = (tile_end - k_tiles) / p.sk_iters + 1;
          const int peers_end = (tile_end + p.sk_iters - 1) / p.sk_iters;
          // An owner with peers is its CTA's last piece, so the ring is idle once both consumers
          // are done reading it: each peer's partial tile is bulk-loaded over the consumer's part
          // of it and summed from shared memory.
          const unsigned int staged = smem_a + consumer * kConsumerBytes;
          const unsigned int bar = stripe_bars + 8 * consumer;
          if (first_peer < peers_end) named_barrier_sync(sm90::kPartialsBarrier, 128 * kConsumers);
          unsigned int parity = 0;
          for (int b = first_peer; b < peers_end; ++b) {
            if (thread == 0) {
              sm90::wait_flag(flags + b * kConsumers, epoch_bar, epoch_word);
              fence_proxy_async_global();
              mbarrier_arrive_expect_tx(bar, kConsumerBytes);
              bulk_load(staged, slots + b * kSlotFloats, kConsumerBytes, bar);
            }
            mbarrier_wait(bar, parity);
            parity ^= 1;
            sm90::add_staged_partials(staged, acc, thread);
            named_barrier_sync(1 + consumer, 128);  // all read before the next peer lands
          }
          if (marks) sm90::trace_mark(p.flags, kTraceFlagsReady);
        }
      }
      if constexpr (kSplitK) {
        // Writers publish their partial sums and move on; the reducer sums them in split order
        // (see "Split-K" above: roles, memory ordering, epochs, deadlock freedom).
        const int tiles = p.tiles_m * p.tiles_n;
        const int tile = w.tile_m * p.tiles_n + w.tile_n;
        float* const slots = p.workspace + consumer * (kRowsPerConsumer * kTileN);
        unsigned int* const flags = p.flags + sm90::kFlagHeaderWords + consumer;
        // The reduction mode, uniform over the launch: distributed when every unit has a CTA
        // (cluster) of its own, so all splits of a tile run at once (see "Split-K" above).
        if (num_units <= unit_stride &&
            sm90::kFlagHeaderWords + p.num_splits * tiles * kConsumers <= sm90::kFlagRegionWords) {
          // Every split publishes its partials but its own stripe of columns, waits for the
          // other splits of the tile and reduces and stores that stripe (direct stores).
          constexpr long long kSlotFloats = kTileM * kTileN;
          const long long split_stride = static_cast<long long>(tiles) * kSlotFloats;
          float* const slot0 = slots + static_cast<long long>(tile) * kSlotFloats;
          const unsigned int* const flag0 = flags + tile * kConsumers;
          int q_begin = 0, q_end = 0;
          sm90::slice_quads(w.split, p.num_splits, kAccs / 4, q_begin, q_end);
          unsigned int* const my_flag = flags + (w.split * tiles + tile) * kConsumers;
          // Published: all but the unit's own stripe, which its sum takes from its registers.
          if constexpr (kBulkPartials) {
            // Every consumer is done reading the ring (this CTA's only unit), so it holds the
            // partial tile; thread 0 bulk-stores it and publishes once the writes are complete.
            const unsigned int staged = smem_a + consumer * (kRowsPerConsumer * kTileN * 4);
            named_barrier_sync(sm90::kPartialsBarrier, 128 * kConsumers);
            sm90::stage_partials(staged, acc, thread);
            fence_proxy_async_shared();
            named_barrier_sync(1 + consumer, 128);
            if (thread == 0) {
              sm90::bulk_store_partials<kMI, kAccs / 4>(slot0 + w.split * split_stride, staged,
                                                        q_begin, q_end);
              bulk_commit_group();
              bulk_wait_group_all();
              fence_proxy_async_global();
              st_release_gpu(my_flag, sm90::load_epoch(epoch_bar, epoch_word));
            }
          } else {
            sm90::store_partials(slot0 + w.split * split_stride, acc, thread, q_begin, q_end);
            named_barrier_sync(1 + consumer, 128);
            if (thread == 0) st_release_gpu(my_flag, sm90::load_epoch(epoch_bar, epoch_word));
          }
          if (marks) sm90::trace_mark(p.flags, kTracePublished);
          if (q_begin == q_end) continue;  // more splits than quads: nothing to reduce
          if constexpr (kBulkPartials) {
            // Every split's stripe in the consumer's half of the ring, slot z for split z: the
            // others bulk-loaded once both consumers' stores have completed (each thread 0
            // waited before this barrier), this unit's own written from its registers meanwhile.
            const int width = q_end - q_begin;
            if (p.num_splits * kMI * width * sm90::kQuadBytes <= kRingBytes / kConsumers) {
              const unsigned int stripes = smem_a + consumer * (kRingBytes / kConsumers);
              const unsigned int bar = stripe_bars + 8 * consumer;
              named_barrier_sync(sm90::kPartialsBarrier, 128 * kConsumers);
              if (thread == 0) {
                sm90::wait_flags(flag0, tiles * kConsumers, p.num_splits, w.split, epoch_bar,
                                 epoch_word);
                fence_proxy_async_global();
                mbarrier_arrive_expect_tx(bar, (p.num_splits - 1) * kMI * width * sm90::kQuadBytes);
                sm90::bulk_load_stripes<kMI, kAccs / 4>(stripes, slot0, split_stride, p.num_splits,
                                                        w.split, q_begin, q_end, bar);
              }
              const unsigned int base = stripes - q_begin * sm90::kQuadBytes + thread * 16;
              sm90::stage_own_stripe(base, w.split, q_begin, q_end, acc);
              mbarrier_wait(bar, 0);  // its only phase in the launch
              if (marks) sm90::trace_mark(p.flags, kTraceFlagsReady);
              sm90::sum_stripe<kSwapAB, kMI, sm90::reduce_batch<kMI * kAccs>()>(
                  base, p.num_splits, q_begin, q_end,
                  sm90::stripe_out<TOut, kTileM, kTileN, kConsumers, kSwapAB>(p, w, consumer, warp,
                                                                              lane));
              if (marks) sm90::trace_mark(p.flags, kTraceStored);
              continue;
            }
          }
          sm90::wait_flags(flag0, tiles * kConsumers, p.num_splits, w.split, epoch_bar, epoch_word);
          if (marks) sm90::trace_mark(p.flags, kTraceFlagsReady);
          // Opaque copies of the slice bounds: otherwise the compiler keeps the store's 32 quad
          // predicates live for the reduction (and spills the 128 x 256 tile).
          q_begin = sm90::launder_u32(q_begin);
          q_end = sm90::launder_u32(q_end);
          const float* const src0 = slot0 + thread * 4;
          const auto load = [&](int z, int offset, float(&t)[4]) {
            ld_global_cg_v4f32(src0 + offset + z * split_stride, t[0], t[1], t[2], t[3]);
          };
          sm90::reduce_slice<kSwapAB>(load, w.split, p.num_splits, q_begin, q_end, acc,
                                      sm90::stripe_out<TOut, kTileM, kTileN, kConsumers, kSwapAB>(
                                          p, w, consumer, warp, lane));
          if (marks) sm90::trace_mark(p.flags, kTraceStored);
          continue;
        }
        if (w.split < p.num_splits - 1) {
          const int slot = w.split * tiles + tile;
          sm90::store_partials(slots + static_cast<long long>(slot) * (kTileM * kTileN), acc,
                               thread);
          named_barrier_sync(1 + consumer, 128);
          if (thread == 0)
            st_release_gpu(flags + slot * kConsumers, sm90::load_epoch(epoch_bar, epoch_word));
          if (marks) sm90::trace_mark(p.flags, kTracePublished);
          continue;
        }
        const float* slot = slots + static_cast<long long>(tile) * (kTileM * kTileN);
        const unsigned int* flag = flags + tile * kConsumers;
        for (int z = 0; z < p.num_splits - 1; ++z) {  // slot and flag of (tile, split z)
          sm90::wait_flag(flag, epoch_bar, epoch_word);
          sm90::add_partials(slot, acc, thread);
          slot += static_cast<long long>(tiles) * (kTileM * kTileN);
          flag += tiles * kConsumers;
        }
      }

      const int row_begin = w.tile_m * kTileM + consumer * kRowsPerConsumer;
      if constexpr (kEpilogueSlots == 0) {
        const int row0 = row_begin + 16 * warp + lane / 4;
        const int col0 = w.tile_n * kTileN + 2 * (lane % 4);
        sm90::store_accumulators<kSwapAB>(static_cast<TOut*>(p.c), p.ldc, p.m, p.n, row0, col0,
                                          acc);
        if (marks) sm90::trace_mark(p.flags, kTraceStored);
      } else {
        // Uniform over the warpgroup (tile coordinates only), so the named barriers match.
        if (row_begin < p.m) {
#pragma unroll
          for (int slab = 0; slab < kSlabs; ++slab) {
            const int col_begin = w.tile_n * kTileN + slab * kSlabCols;
            if (col_begin >= p.n) continue;
            const unsigned int slot = my_slots + (stores % kEpilogueSlots) * kSlabBytes;
            if (thread == 0) bulk_wait_group_read<kEpilogueSlots - 1>();
            named_barrier_sync(1 + consumer, 128);
            sm90::stage_slab<TOut, kSlabRowBytes>(slot, acc, slab, warp, lane);
            fence_proxy_async_shared();
            named_barrier_sync(1 + consumer, 128);
            if (thread == 0) {
              tma_store_2d(&params.c_map, slot, col_begin, row_begin);
              bulk_commit_group();
            }
            ++stores;
          }
        }
        if (marks) sm90::trace_mark(p.flags, kTraceStored);  // the TMA stores issued
      }
    }
    if constexpr (kEpilogueSlots > 0) {
      if (thread == 0) bulk_wait_group_all();
    }
  }
  // Pairs need no barrier at exit (the producer tail above). Any barrier here, a cluster's, the
  // CTA's or even a warp's reconvergence, slows the pairs' main loop (bench/NOTES.md, "sm90 GEMM
  // schedules"). Split-K pairs keep the warp's: without it ptxas spills.
  if constexpr (kPair > 1 && kSplitK) __syncwarp();
}

}  // namespace kt
