// The sm90 GEMM's direct epilogue (kEpilogueSlots == 0): each consumer thread stores its
// accumulators of a unit's tile straight to C, masked at the edges, transposed for swap-AB.
#pragma once

#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_store.cuh"
#include "kerntune/gemm/sm90_traits.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// Stores consumer c's rows of unit w's tile of C from its accumulators (store_accumulators).
template <typename K>
__device__ __forceinline__ void store_tile_direct(const GemmParams& p, const WorkUnit& w,
                                                  const float (&acc)[K::kMI][K::kAccs],
                                                  const ConsumerThread& c) {
  const int row_begin = w.tile_m * K::kTileM + c.consumer * K::kRowsPerConsumer;
  const int row0 = row_begin + 16 * c.warp + c.lane / 4;
  const int col0 = w.tile_n * K::kTileN + 2 * (c.lane % 4);
  store_accumulators<K::kSwapAB>(static_cast<typename K::TOut*>(p.c), p.ldc, p.m, p.n, row0, col0,
                                 acc);
}

}  // namespace sm90
}  // namespace kt
