// The sm90 GEMM's units of work: which output tile, which K split (or which stream-K piece) a
// persistent CTA of gemm_sm90 runs for each index it walks, with clusters along M, N or K.
#pragma once

#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/tile_order.cuh"

namespace kt {
namespace sm90 {

// One unit of work of a persistent CTA: an output tile and the K range of one split.
// has_tile is false for the second CTA of a cluster when the tile rows (columns, kClusterN) are
// odd and its tile lies below (right of) C: it still loads and multiplies (its peer needs its half
// of B, or of A), stores nothing. sk_tile: a stream-K piece's tile among the stream-K units (-1
// for a whole unit); an empty piece has k_end <= k_begin.
struct WorkUnit {
  int tile_m, tile_n;
  bool has_tile;
  int split;
  int k_begin, k_end;
  int sk_tile = -1;
};

// K range [k_begin, k_end) of split w.split (the whole K without split-K).
__device__ __forceinline__ void set_k_range(WorkUnit& w, const GemmParams& p, bool split_k) {
  w.k_begin = split_k ? w.split * p.k_per_split : 0;
  w.k_end = split_k && p.k - w.k_begin > p.k_per_split ? w.k_begin + p.k_per_split : p.k;
}

// Unit `unit` of ceil(tiles_m / kCluster) * tiles_n * splits, for the CTA of rank `rank` in its
// cluster: a cluster works on kCluster vertically adjacent tiles (same tile_n, so they share B).
// Splits are the slow index, so clusters running together work on neighbouring tiles of the same
// split; the raster group counts tile rows, so a cluster row is raster_group / kCluster of them.
// kClusterN == 2: a cluster works on two horizontally adjacent tiles (same tile_m, so they share
// A), of tiles_m * ceil(tiles_n / 2) pairs. kClusterK > 1 (cluster split-K): unit `unit` of
// tiles_m * tiles_n is a whole tile, whose splits are the cluster's CTAs (split = rank).
template <int kCluster, int kClusterK, int kClusterN>
__device__ __forceinline__ WorkUnit work_unit(int unit, const GemmParams& p, bool split_k,
                                              int rank) {
  WorkUnit w;
  if constexpr (kClusterN > 1) {
    const int cluster_cols = (p.tiles_n + kClusterN - 1) / kClusterN;
    const int num_pairs = p.tiles_m * cluster_cols;
    w.split = split_k ? unit / num_pairs : 0;
    int cluster_col = 0;
    grouped_tile(unit - w.split * num_pairs, p.tiles_m, cluster_cols, p.raster_group, w.tile_m,
                 cluster_col);
    w.tile_n = cluster_col * kClusterN + rank;
    w.has_tile = w.tile_n < p.tiles_n;
    set_k_range(w, p, split_k);
    return w;
  }
  if constexpr (kClusterK > 1) {
    grouped_tile(unit, p.tiles_m, p.tiles_n, p.raster_group, w.tile_m, w.tile_n);
    w.has_tile = true;
    w.split = rank;
    set_k_range(w, p, true);
    return w;
  }
  const int cluster_rows = (p.tiles_m + kCluster - 1) / kCluster;
  const int num_tiles = cluster_rows * p.tiles_n;
  w.split = split_k ? unit / num_tiles : 0;
  const int group = p.raster_group / kCluster < 1 ? 1 : p.raster_group / kCluster;
  int cluster_row = 0;
  grouped_tile(unit - w.split * num_tiles, cluster_rows, p.tiles_n, group, cluster_row, w.tile_n);
  w.tile_m = cluster_row * kCluster + rank;
  w.has_tile = w.tile_m < p.tiles_m;
  set_k_range(w, p, split_k);
  return w;
}

// Stream-K (sm90_stream_k.cuh): unit `unit` >= dp_units is piece j = (unit - dp_units)
// / ctas of CTA b = (unit - dp_units) % ctas. CTA b owns k-tiles [b * sk_iters, (b + 1) *
// sk_iters) of the last sk_units units' k-tiles laid end to end (unit dp_units + t's k-tiles at
// [t * k_tiles, (t + 1) * k_tiles)); its range cut at tile boundaries gives its pieces, j the
// j-th. Pieces past the range are empty.
template <int kTileK>
__device__ __forceinline__ WorkUnit stream_k_piece(int unit, const GemmParams& p, int dp_units,
                                                   int ctas) {
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  const int cta = (unit - dp_units) % ctas;
  const int piece = (unit - dp_units) / ctas;
  const int begin = cta * p.sk_iters;
  const int end = min(begin + p.sk_iters, p.sk_units * k_tiles);
  const int first = piece == 0 ? begin : (begin / k_tiles + piece) * k_tiles;
  WorkUnit w;
  if (first >= end) {
    w.tile_m = w.tile_n = w.split = w.k_begin = w.k_end = 0;
    w.has_tile = false;
    return w;
  }
  const int tile = first / k_tiles;
  w = work_unit<1, 1, 1>(dp_units + tile, p, false, 0);
  w.sk_tile = tile;
  w.k_begin = (first - tile * k_tiles) * kTileK;
  w.k_end = min(p.k, (min(end, (tile + 1) * k_tiles) - tile * k_tiles) * kTileK);
  return w;
}

// The unit `unit` of a CTA: work_unit, or past the whole units of a stream-K launch, a piece.
template <int kCluster, int kClusterK, int kClusterN, bool kStreamK, int kTileK>
__device__ __forceinline__ WorkUnit unit_at(int unit, const GemmParams& p, bool split_k, int rank,
                                            int dp_units, int ctas) {
  if constexpr (kStreamK) {
    if (unit >= dp_units) return stream_k_piece<kTileK>(unit, p, dp_units, ctas);
  }
  return work_unit<kCluster, kClusterK, kClusterN>(unit, p, split_k, rank);
}

}  // namespace sm90
}  // namespace kt
