// The sm90 GEMM's cluster split-K (kClusterK = S > 1, key field clkS): a tile's S splits are
// one cluster's CTAs, which sum their partial tiles through distributed shared memory.
//
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
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_partials.cuh"
#include "kerntune/gemm/sm90_trace.cuh"
#include "kerntune/gemm/sm90_traits.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// Cluster split-K: the named barrier over every thread of the CTA that closes a unit's main loop
// (1 and 2 are the consumers' own).
constexpr unsigned int kUnitBarrier = 3;

// Cluster split-K, once per unit, for the producer warpgroup: the three barriers the consumers
// meet around the reduction. (A) the CTA's main loop is done, so the ring may hold partial sums;
// (B) every CTA of the cluster has staged its partial sums; (C) every CTA has read what it needs
// from its peers, so the ring may be loaded again and the CTA may exit.
template <int kConsumers>
__device__ __forceinline__ void cluster_split_barriers() {
  named_barrier_sync(kUnitBarrier, 128 * (kConsumers + 1));
  cluster_sync();
  cluster_sync();
}

// Cluster split-K for consumer thread c of unit w, after its main loop: stages its partial tile
// over the ring, then sums this CTA's stripe of columns from every split's shared memory and
// stores it, between barriers (A), (B) and (C). `marks`: stamp the trace.
template <typename K>
__device__ __forceinline__ void cluster_split_k(const GemmParams& p, const SmemLayout<K>& smem,
                                                const WorkUnit& w, float (&acc)[K::kMI][K::kAccs],
                                                const ConsumerThread& c, bool marks) {
  const unsigned int partials = smem.a + c.consumer * (K::kRowsPerConsumer * K::kTileN * 4);
  named_barrier_sync(kUnitBarrier, 128 * (K::kConsumers + 1));  // (A)
  stage_partials(partials, acc, c.thread);
  fence_proxy_async_shared();  // generic writes over the ring, which TMA writes next
  cluster_sync();              // (B)
  if (marks) trace_mark(p.flags, kTracePublished);
  int q_begin = 0, q_end = 0;
  slice_quads(w.split, K::kClusterK, K::kAccs / 4, q_begin, q_end);
  if (q_begin < q_end) {
    const unsigned int mine = partials + c.thread * 16;
    const auto load = [&](int z, int mi, int q, float(&t)[4]) {
      ld_shared_cluster_v4f32(
          map_shared_rank(mine + partial_float4<K::kAccs>(mi, q, 0) * 16, unsigned(z)), t[0], t[1],
          t[2], t[3]);
    };
    sum_quads<K::kSwapAB, K::kMI, sum_batch<K::kMI * K::kAccs>()>(load, K::kClusterK, q_begin,
                                                                  q_end, stripe_out<K>(p, w, c));
  }
  if (marks) trace_mark(p.flags, kTraceStored);
  cluster_sync();  // (C)
}

}  // namespace sm90
}  // namespace kt
