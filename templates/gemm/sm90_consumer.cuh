// The sm90 GEMM's consumer main loop: a consumer warpgroup multiplies a unit's k-tiles from the
// ring of stages with wgmma into its FP32 accumulators, releasing each stage to the producer(s)
// once the wgmma reading it has completed.
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/common/stage_ring.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_traits.cuh"

namespace kt {
namespace sm90 {

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

// acc = the consumer's rows of A times B over the num_k_tiles k-tiles of a unit, read from the
// ring from `ring` on (which it leaves past them). A tile's first k16 step has scale-d 0; one
// wgmma group stays in flight and the stage before it is released, after which load_next() runs
// (the inline loads without a producer warpgroup). `traced`: stamp the first full barrier.
template <typename K, typename LoadNext>
__device__ __forceinline__ void mma_unit(float (&acc)[K::kMI][K::kAccs], const SmemLayout<K>& smem,
                                         StageRing<K::kStages>& ring, int num_k_tiles,
                                         const ConsumerThread& c, bool traced, unsigned int* flags,
                                         LoadNext load_next) {
  int previous_stage = 0;
  for (int kt = 0; kt < num_k_tiles; ++kt) {
    mbarrier_wait(smem.full_bars + 8 * ring.stage, ring.phase);
    // The producer threads' copies were generic-proxy writes; wgmma reads through the async proxy.
    if constexpr (K::kMnCopied) fence_proxy_async_shared();
    if (kt == 0 && traced) trace_mark(flags, kTraceFirstFull);
    // The consumer's rows: a K-major A's rows of every atom along K, an M-major A's own atoms.
    const unsigned int a_tile =
        smem.a + ring.stage * K::kAStageBytes +
        c.consumer * (K::kAKMajor ? K::kRowsPerConsumer * kRowBytes : K::kMI * K::kMnAtomBytes);
    const unsigned int b_tile = smem.b + ring.stage * K::kBStageBytes;
#pragma unroll
    for (int mi = 0; mi < K::kMI; ++mi) fence_accumulators(acc[mi]);
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < K::kKAtoms; ++j)
#pragma unroll
      for (int ks = 0; ks < K::kKSteps; ++ks) {
        // An M- or N-major operand's k16 step within its atoms of the stage's whole depth.
        const int mn_step = 2048 * (j * K::kKSteps + ks);
        const unsigned long long desc_b =
            K::kBKMajor ? kmajor_descriptor(b_tile + j * K::kBKAtomBytes + 32 * ks)
                        : mnmajor_descriptor(b_tile + mn_step, K::kMnAtomBytes);
#pragma unroll
        for (int mi = 0; mi < K::kMI; ++mi) {
          // An M-major A holds each m64 tile's rows in an atom of its own.
          const unsigned long long desc_a =
              K::kAKMajor
                  ? kmajor_descriptor(a_tile + j * K::kAKAtomBytes + mi * 64 * kRowBytes + 32 * ks)
                  : mnmajor_descriptor(a_tile + mi * K::kMnAtomBytes + mn_step, K::kMnAtomBytes);
          // The first k16 step of a tile overwrites the previous tile's accumulators.
          wgmma_m64k16_ss<typename K::TIn, K::kTileN, K::kBKMajor ? 0 : 1, K::kAKMajor ? 0 : 1>(
              acc[mi], desc_a, desc_b, kt > 0 || j > 0 || ks > 0);
        }
      }
    wgmma_commit();
#pragma unroll
    for (int mi = 0; mi < K::kMI; ++mi) fence_accumulators(acc[mi]);
    // Keep this k-tile's wgmma in flight; the previous one is done, so its stage is free.
    wgmma_wait<1>();
    if (kt > 0) {
      release_stage<K::kPair>(smem.empty_bars + 8 * previous_stage, c.thread);
      load_next();
    }
    previous_stage = ring.stage;
    ring.advance();
  }
  wgmma_wait<0>();
#pragma unroll
  for (int mi = 0; mi < K::kMI; ++mi) fence_accumulators(acc[mi]);
  release_stage<K::kPair>(smem.empty_bars + 8 * previous_stage, c.thread);
  load_next();
}

}  // namespace sm90
}  // namespace kt
