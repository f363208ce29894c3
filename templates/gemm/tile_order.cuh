// The order in which a grid (or a persistent CTA's loop) visits output tiles: grouped raster
// order, so tiles computed at the same time share A rows and B columns in L2. Used by every GEMM
// family.
#pragma once

namespace kt {

// Maps a linear tile id to a (tile row, tile column) in grouped order: groups of `group` tile rows,
// and within a group consecutive ids walk down the rows first, then across the columns, so CTAs
// running together share A rows and B columns in L2.
__device__ __forceinline__ void grouped_tile(int id, int tiles_m, int tiles_n, int group,
                                             int& tile_m, int& tile_n) {
  // Clamped to [1, tiles_m], so group * tiles_n <= the tile count fits an int.
  group = group < 1 ? 1 : (group > tiles_m ? tiles_m : group);
  const int group_tiles = group * tiles_n;
  const int first_m = (id / group_tiles) * group;
  const int rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  const int in_group = id % group_tiles;
  tile_m = first_m + in_group % rows;
  tile_n = in_group / rows;
}

}  // namespace kt
