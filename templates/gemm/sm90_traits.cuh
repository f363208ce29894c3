// The parts every piece of the sm90 GEMM shares: GemmTraits (the compile-time facts of one
// gemm_sm90 instance, with the limits on its template arguments), SmemLayout (where its ring,
// epilogue slots and barriers lie in shared memory) and ConsumerThread (who a consumer thread is).
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm90.cuh"

namespace kt {
namespace sm90 {

// K depth of a swizzle atom: one 128-byte swizzle row of 16-bit elements, so every K-major
// operand tile is one TMA box per atom along K, and a k16 step is a +32 B (K-major) or +2048 B
// (M- or N-major) move. A stage holds one atom along K, or (kTileK 128 or 256) two or four; an
// M- or N-major operand's box is 64 columns by the stage's kTileK K-rows.
constexpr int kAtomK = 64;
constexpr int kRowBytes = kAtomK * 2;

// Register split of the two-consumer CTA (384 threads, 168 registers each at launch):
// 40 + 2 x 232 = 3 x 168, so the consumers' increase is exactly what the producer gives up.
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

// The template arguments of gemm_sm90 (their meaning: the kernel's contract) and what follows
// from them: per-consumer tiles, stage and slab sizes, and which schedule machinery is compiled.
template <typename TIn_, typename TOut_, int kTileM_, int kTileN_, int kTileK_, int kStages_,
          int kConsumers_, bool kBIsNxK_, bool kSplitK_, int kEpilogueSlots_, int kCluster_,
          int kClusterK_, bool kSwapAB_, int kClusterN_, bool kStreamK_, bool kWarpSpecialized_,
          int kMnCopyBytes_>
struct GemmTraits {
  using TIn = TIn_;
  using TOut = TOut_;
  static constexpr int kTileM = kTileM_;
  static constexpr int kTileN = kTileN_;
  static constexpr int kTileK = kTileK_;
  static constexpr int kStages = kStages_;
  static constexpr int kConsumers = kConsumers_;
  static constexpr bool kBIsNxK = kBIsNxK_;
  static constexpr bool kSplitK = kSplitK_;
  static constexpr int kEpilogueSlots = kEpilogueSlots_;
  static constexpr int kCluster = kCluster_;
  static constexpr int kClusterK = kClusterK_;
  static constexpr bool kSwapAB = kSwapAB_;
  static constexpr int kClusterN = kClusterN_;
  static constexpr bool kStreamK = kStreamK_;
  static constexpr bool kWarpSpecialized = kWarpSpecialized_;
  static constexpr int kMnCopyBytes = kMnCopyBytes_;
  // The wgmma operands' majorness. Swap-AB passes the caller's B as A and its A as B, so the
  // kernel's B is K-major with either layout, and its A is K-major unless the caller's B is
  // K x N (nn), whose swapped A is M-major.
  static constexpr bool kAKMajor = kBIsNxK || !kSwapAB;
  static constexpr bool kBKMajor = kBIsNxK || kSwapAB;
  // The M- or N-major operand (the caller's K x N B of nn: the kernel's B, or swapped its A)
  // copied into the stages by the producer warpgroup's cp.async of kMnCopyBytes each, its rows
  // being too narrowly aligned for TMA (sm90_mn_copies.cuh); 0: every operand by TMA.
  static constexpr bool kMnCopied = kMnCopyBytes > 0;
  static constexpr bool kACopied = kMnCopied && !kAKMajor;
  static constexpr bool kBCopied = kMnCopied && !kBKMajor;

  static_assert(DTypeTraits<TIn>::kIsMmaOperand, "TIn must be kt::bf16 or kt::fp16");
  static_assert(sizeof(TOut) == 2 || sizeof(TOut) == 4, "TOut must be kt::bf16, kt::fp16 or float");
  static_assert(kConsumers == 1 || kConsumers == 2, "one or two consumer warpgroups");
  static_assert(kTileM == 64 * kConsumers || kTileM == 128 * kConsumers,
                "each consumer owns 64 or 128 rows");
  // 144 columns (12 x 11 tiles of 128 x 144 fill 132 SMs at 1536 x 1536) and 32 (128 CTAs of
  // 64 x 32 stream the weights of a 64 x 4096 x 4096 decode step without split-K) only where
  // whole 64-column atoms of B are not needed: a K-major B's box rows. Their TMA-store epilogue
  // stages two unswizzled half-tile slabs. 16 for swap-AB decode steps: 16 tokens on the wgmma N
  // side. Any multiple of 8 for swap-AB tiles fitted to the tokens (ceil(M / tiles) rounded up),
  // direct stores.
  static_assert(
      (kTileN % 64 == 0 && kTileN <= 256) ||
          (kTileN % 8 == 0 && kTileN >= 16 && kTileN <= 256 && kBKMajor),
      "kTileN must be 64, 128, 192 or 256 (or, B K-major, a multiple of 8 from 16 to 256)");
  // 144 fit beside a whole-tile epilogue (cuBLASLt's 256 x 136 swap-AB tile); a split-K or
  // stream-K reduction's loads and flag polls need the room of the last 16.
  static_assert(kTileM / kConsumers / 64 * kTileN / 2 <= (kSplitK || kStreamK ? 128 : 144),
                "at most 144 accumulators per thread (128 with split-K or stream-K)");
  static_assert(kTileK == kAtomK || kTileK == 2 * kAtomK || kTileK == 4 * kAtomK,
                "a stage is one, two or four 64-deep swizzle atoms along K");
  static_assert(kStages >= 2 && kStages <= 16, "kStages must be in [2, 16]");
  static_assert(kEpilogueSlots >= 0 && kEpilogueSlots <= 8, "kEpilogueSlots must be in [0, 8]");
  static_assert(kCluster == 1 || kCluster == 2, "clusters of one or two CTAs");
  static_assert(kClusterN == 1 || (kClusterN == 2 && kCluster == 1 && kClusterK == 1),
                "pairs along N (sharing A): two CTAs, no cluster along M or K as well");
  static_assert(kClusterK == 1 || (kSplitK && kCluster == 1 && kEpilogueSlots == 0 &&
                                   kClusterK >= 2 && kClusterK <= 8),
                "cluster split-K: 2 to 8 splits, no cluster along M, direct stores");
  static_assert(!kSwapAB || (kEpilogueSlots == 0 && (kAKMajor || kClusterN == 1)),
                "swap-AB: direct (transposed) stores; an M-major A is not shared by pairs");
  static_assert(!kStreamK || (!kSplitK && kCluster == 1 && kClusterN == 1 && !kSwapAB),
                "stream-K: no split-K, clusters or swap-AB");
  static_assert(kMnCopyBytes == 0 ||
                    ((kMnCopyBytes == 4 || kMnCopyBytes == 8) && !kBIsNxK && kWarpSpecialized &&
                     kCluster == 1 && kClusterN == 1 && kClusterK == 1 && !kStreamK),
                "copied operands: 4- or 8-byte copies of nn's B by a producer warpgroup, no "
                "clusters or stream-K");
  static_assert(kWarpSpecialized || (!kSplitK && !kStreamK && kCluster == 1 && kClusterN == 1 &&
                                     kClusterK == 1 && !kSwapAB),
                "without a producer warpgroup: no split-K, stream-K, clusters or swap-AB");

  static constexpr int kRowsPerConsumer = kTileM / kConsumers;
  static constexpr int kMI = kRowsPerConsumer / 64;  // m64 wgmma tiles per consumer
  static constexpr int kAccs = kTileN / 2;           // FP32 accumulators per thread per m64 tile
  static constexpr int kKAtoms = kTileK / kAtomK;    // swizzle atoms along K per stage
  static constexpr int kKSteps = kAtomK / 16;        // k16 steps per atom
  static constexpr int kAKAtomBytes = kTileM * kRowBytes;  // A (and nt B) atoms along K
  static constexpr int kBKAtomBytes = kTileN * kRowBytes;
  static constexpr int kAStageBytes = kKAtoms * kAKAtomBytes;
  static constexpr int kBStageBytes = kKAtoms * kBKAtomBytes;
  // An M- or N-major operand's atom (nn's B, swap-AB nn's A): a stage's kTileK K-rows of 64
  // columns, one TMA box; a k16 step of atom j is at j * kMnAtomBytes + 2048 * step.
  static constexpr int kMnAtomBytes = kTileK * kRowBytes;
  static constexpr int kRingBytes = kStages * (kAStageBytes + kBStageBytes);
  // Epilogue: columns, row bytes and count of the staged slabs. Tiles whose rows are whole
  // 128-byte multiples stage 128-byte-wide slabs in the 128B swizzle; the others (144 and 32
  // columns of 16-bit C, 144 of FP32) two half-tile slabs, unswizzled (the host's
  // sm90_slab_columns, which sizes the c_map box, is the same rule).
  static constexpr int kSlabCols =
      kTileN * int(sizeof(TOut)) % 128 == 0 ? 128 / int(sizeof(TOut)) : kTileN / 2;
  static constexpr int kSlabRowBytes = kSlabCols * int(sizeof(TOut));
  static constexpr int kSlabs = kTileN / kSlabCols;
  static constexpr int kSlabBytes = kRowsPerConsumer * kSlabRowBytes;
  static_assert(kEpilogueSlots == 0 || kSlabBytes % 1024 == 0,
                "epilogue slots keep the stages 1024-byte aligned");
  static constexpr int kEpilogueBytes = kConsumers * kEpilogueSlots * kSlabBytes;
  static_assert(kClusterK == 1 || kTileM * kTileN * 4 <= kRingBytes,
                "cluster split-K stages the partial tile in the ring");
  static_assert(!kStreamK || kTileM * kTileN * 4 <= kRingBytes,
                "stream-K: an owner stages its peers' FP32 partial tiles over the ring");
  // Distributed split-K moves partial sums by bulk copies through the ring when the FP32 tile
  // fits it, beside fewer than 128 accumulators per thread (with 128, ptxas spills around the
  // bulk path's staging and shared-memory sum); otherwise, and in serial mode, by each thread's
  // 16-byte loads and stores.
  static constexpr bool kBulkPartials =
      kSplitK && kClusterK == 1 && kTileM * kTileN * 4 <= kRingBytes && kMI * kAccs < 128;
  // CTAs that share each stage's loads (one multicasts half of B, or of A, to the other).
  static constexpr int kPair = kCluster * kClusterN;
  static constexpr bool kInCluster = kPair * kClusterK > 1;
  // Ready flags in the workspace, and so the launch epoch: split-K through L2, stream-K.
  static constexpr bool kL2Flags = (kSplitK && kClusterK == 1) || kStreamK;
};

// Shared addresses of a CTA's parts, from the 1024-byte-aligned base of its dynamic shared
// memory: [A stages] [B stages] [epilogue slots] [full and empty barriers] [epoch barrier and
// word] [stripe barriers] [publish barriers].
// NOTE: the 128B swizzle is a function of absolute shared addresses, so the stages and the
// epilogue slabs must start on 1024-byte boundaries (all their sizes are multiples of 1024); the
// host adds 1024 bytes of slack for this alignment. A cluster's CTAs share this layout, so a
// multicast lands at the same offsets in both.
template <typename K>
struct SmemLayout {
  unsigned int a;           // the ring's A stages (also where partial sums are staged)
  unsigned int b;           // the ring's B stages
  unsigned int c;           // the epilogue slots
  unsigned int full_bars;   // per stage: its TMA bytes have landed
  unsigned int empty_bars;  // per stage: every consumer is done with it
  // Split-K and stream-K: this launch's epoch and the mbarrier that publishes it (begin_launch).
  // They lie in the 1024 bytes of alignment slack, of which at least 16 are past the barriers
  // (the dynamic base is 16-byte aligned).
  unsigned int epoch_bar;
  unsigned int epoch_word;
  // Distributed split-K by bulk copies: each consumer's mbarrier for its peers' stripes (16 more
  // bytes, which smem_bytes adds for split-K configs); stream-K uses them for the partial tiles
  // its owner loads, and each consumer's mbarrier for its publishing piece's stores (16 more).
  unsigned int stripe_bars;
  unsigned int publish_bars;

  __device__ __forceinline__ explicit SmemLayout(unsigned int base)
      : a(base),
        b(a + K::kStages * K::kAStageBytes),
        c(b + K::kStages * K::kBStageBytes),
        full_bars(c + K::kEpilogueBytes),
        empty_bars(full_bars + K::kStages * 8),
        epoch_bar(empty_bars + K::kStages * 8),
        epoch_word(epoch_bar + 8),
        stripe_bars(epoch_bar + 16),
        publish_bars(stripe_bars + 16) {}
};

// Thread 0 initialises every barrier of the layout; then the CTA (the cluster, for pairs) meets,
// so no thread (no peer) touches a barrier uninitialised.
template <typename K>
__device__ __forceinline__ void init_barriers(const SmemLayout<K>& smem) {
  if (threadIdx.x == 0) {
#pragma unroll 1
    for (int s = 0; s < K::kStages; ++s) {
      // The producer's thread 0 (expect_tx), and each producer thread's copies.
      mbarrier_init(smem.full_bars + 8 * s, K::kMnCopied ? 1 + 128 : 1);
      mbarrier_init(smem.empty_bars + 8 * s, K::kConsumers * K::kPair);
    }
    if constexpr (K::kL2Flags) mbarrier_init(smem.epoch_bar, 1);
    if constexpr (K::kBulkPartials || K::kStreamK)
      for (int c = 0; c < K::kConsumers; ++c) mbarrier_init(smem.stripe_bars + 8 * c, 1);
    if constexpr (K::kStreamK)
      for (int c = 0; c < K::kConsumers; ++c) mbarrier_init(smem.publish_bars + 8 * c, 128);
    fence_mbarrier_init();
  }
  if constexpr (K::kPair > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }
}

// A thread of a consumer warpgroup: the warpgroup's index among the consumers, and the thread's
// index in it, its warp and lane.
struct ConsumerThread {
  int consumer;
  int thread;
  int warp;
  int lane;
};

}  // namespace sm90
}  // namespace kt
