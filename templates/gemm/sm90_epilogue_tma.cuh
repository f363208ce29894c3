// The sm90 GEMM's TMA-store epilogue (kEpilogueSlots > 0): each consumer stages column slabs of
// its rows in its ring of epilogue slots and one thread TMA-stores each slab, so the stores drain
// under the next unit's main loop.
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/common/wgmma_slab.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_traits.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// One consumer's epilogue slots (kEpilogueSlots slabs of kSlabBytes) and the count of TMA stores
// it issued: store s uses slot s % kEpilogueSlots. Slot invariant: the consumer's thread 0 issues
// every store; before a slot is rewritten it waits until at most kEpilogueSlots - 1 of its bulk
// groups are still reading, i.e. the group that last used the slot is done; a named barrier then
// releases the warpgroup's writes, each writer fences generic -> async proxy, and a second named
// barrier precedes the store.
template <typename K>
struct TmaStoreEpilogue {
  unsigned int slots;
  int stores = 0;

  __device__ __forceinline__ TmaStoreEpilogue(const SmemLayout<K>& smem, int consumer)
      : slots(smem.c + consumer * K::kEpilogueSlots * K::kSlabBytes) {}

  // Stores consumer c's rows of unit w's tile through params.c_map, one slab of kSlabCols
  // columns at a time (slabs right of N skipped).
  __device__ __forceinline__ void store(const GemmSm90Params& params, const WorkUnit& w,
                                        const float (&acc)[K::kMI][K::kAccs],
                                        const ConsumerThread& c) {
    const GemmParams& p = params.gemm;
    const int row_begin = w.tile_m * K::kTileM + c.consumer * K::kRowsPerConsumer;
    // Uniform over the warpgroup (tile coordinates only), so the named barriers match.
    if (row_begin < p.m) {
#pragma unroll
      for (int slab = 0; slab < K::kSlabs; ++slab) {
        const int col_begin = w.tile_n * K::kTileN + slab * K::kSlabCols;
        if (col_begin >= p.n) continue;
        const unsigned int slot = slots + (stores % K::kEpilogueSlots) * K::kSlabBytes;
        if (c.thread == 0) bulk_wait_group_read<K::kEpilogueSlots - 1>();
        named_barrier_sync(1 + c.consumer, 128);
        stage_slab<typename K::TOut, K::kSlabRowBytes>(slot, acc, slab, c.warp, c.lane);
        fence_proxy_async_shared();
        named_barrier_sync(1 + c.consumer, 128);
        if (c.thread == 0) {
          tma_store_2d(&params.c_map, slot, col_begin, row_begin);
          bulk_commit_group();
        }
        ++stores;
      }
    }
  }

  // Before exit: thread 0 waits for all of its stores.
  __device__ __forceinline__ void drain(const ConsumerThread& c) const {
    if (c.thread == 0) bulk_wait_group_all();
  }
};

}  // namespace sm90
}  // namespace kt
