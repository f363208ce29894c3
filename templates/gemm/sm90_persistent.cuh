// The sm90 GEMM's persistent schedule: which unit indices a CTA (cluster) walks, and the unit
// each index is (sm90_work_units.cuh), for whole tiles, K splits and stream-K pieces alike.
#pragma once

#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// A CTA (cluster) walks units first, first + stride, ... below num_units in increasing order.
// Stream-K: units below dp_units are whole, the rest pieces (stream_k_piece).
struct UnitWalk {
  int num_units;
  int dp_units;
  int first;
  int stride;
};

// The walk of this CTA (cluster) over ceil(tiles_m / kCluster) * ceil(tiles_n / kClusterN)
// tiles (times the splits, split-K through L2); with stream-K, the whole units (the same number
// on every CTA) then each CTA's pieces, at most sk_iters / k_tiles + 2 (one per tile its range
// touches).
template <typename K>
__device__ __forceinline__ UnitWalk unit_walk(const GemmParams& p) {
  const int cluster_rows = (p.tiles_m + K::kCluster - 1) / K::kCluster;
  const int cluster_cols = (p.tiles_n + K::kClusterN - 1) / K::kClusterN;
  UnitWalk walk;
  walk.num_units =
      cluster_rows * cluster_cols * (K::kSplitK && K::kClusterK == 1 ? p.num_splits : 1);
  walk.first = K::kInCluster ? int(cluster_id_x()) : int(blockIdx.x);
  walk.stride = K::kInCluster ? int(cluster_count_x()) : int(gridDim.x);
  walk.dp_units = walk.num_units;
  if constexpr (K::kStreamK) {
    if (p.sk_units > 0) {
      walk.dp_units = walk.num_units - p.sk_units;
      walk.num_units =
          walk.dp_units + walk.stride * (p.sk_iters / ((p.k + K::kTileK - 1) / K::kTileK) + 2);
    }
  }
  return walk;
}

// The unit of index `unit` for the CTA of rank `rank` in its cluster.
template <typename K>
__device__ __forceinline__ WorkUnit walk_unit(const UnitWalk& walk, int unit, const GemmParams& p,
                                              int rank) {
  return unit_at<K::kCluster, K::kClusterK, K::kClusterN, K::kStreamK, K::kTileK>(
      unit, p, K::kSplitK, rank, walk.dp_units, walk.stride);
}

}  // namespace sm90
}  // namespace kt
