// Tile shapes for the GEMM search (see gemm_search.hpp).
#include "ops/gemm/gemm_search.hpp"

#include <algorithm>

namespace kt::tune {

namespace {

// -1: b is half of a, +1: twice, 0: equal, 2: anything else.
int step(int a, int b) {
  if (a == b) return 0;
  if (b * 2 == a) return -1;
  if (a * 2 == b) return 1;
  return 2;
}

}  // namespace

bool same_shape(const GemmConfig& a, const GemmConfig& b) {
  return a.family == b.family && a.swap_ab == b.swap_ab && a.tile_m == b.tile_m &&
         a.tile_n == b.tile_n && a.warp_m == b.warp_m && a.warp_n == b.warp_n &&
         a.consumers == b.consumers && a.split_k == b.split_k && a.warps_k == b.warps_k;
}

bool neighbour_shape(const GemmConfig& best, const GemmConfig& c) {
  if (c.family != best.family || c.swap_ab != best.swap_ab || c.consumers != best.consumers)
    return false;
  const int m = step(best.tile_m, c.tile_m), n = step(best.tile_n, c.tile_n),
            k = step(best.split_k, c.split_k);
  if (m == 2 || n == 2 || k == 2) return false;
  const int moved = (m != 0) + (n != 0) + (k != 0);
  if (moved == 1) return true;
  // Two moves that keep the number of work units: half the tile (twice the tiles) with half
  // the splits, or twice the tile with twice the splits.
  return moved == 2 && k != 0 && (m == k || n == k);
}

int warp_layout_distance(const GemmConfig& a, const GemmConfig& b) {
  return (a.warp_m != b.warp_m) + (a.warp_n != b.warp_n) + (a.warps_k != b.warps_k);
}

int variant_distance(const GemmConfig& a, const GemmConfig& b) {
  return (a.tile_k != b.tile_k) + (a.stages != b.stages) + (a.epilogue != b.epilogue) +
         (a.cluster != b.cluster) + (a.cluster_k != b.cluster_k) + (a.cluster_n != b.cluster_n) +
         (a.raster_group != b.raster_group) + (a.warp_specialized != b.warp_specialized) +
         warp_layout_distance(a, b);
}

std::vector<std::size_t> neighbour_moves(const GemmConfig& base,
                                         const std::vector<GemmConfig>& candidates,
                                         const std::vector<GemmConfig>& measured, int fresh,
                                         int retried) {
  // The closest measured config of c's shape, as a distance from base (-1: none measured).
  auto closest_measured = [&](const GemmConfig& c) {
    int closest = -1;
    for (const GemmConfig& m : measured)
      if (same_shape(m, c)) {
        const int d = variant_distance(base, m);
        if (closest < 0 || d < closest) closest = d;
      }
    return closest;
  };
  std::vector<std::size_t> picks;  // one per shape, the closest so far
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const GemmConfig& c = candidates[i];
    if (!neighbour_shape(base, c)) continue;
    const auto same = [&](std::size_t j) { return same_shape(candidates[j], c); };
    const auto it = std::find_if(picks.begin(), picks.end(), same);
    if (it == picks.end()) {
      picks.push_back(i);
    } else if (variant_distance(base, c) < variant_distance(base, candidates[*it])) {
      *it = i;
    }
  }
  std::stable_sort(picks.begin(), picks.end(), [&](std::size_t a, std::size_t b) {
    return warp_layout_distance(base, candidates[a]) < warp_layout_distance(base, candidates[b]);
  });
  std::vector<std::size_t> moves;
  int fresh_left = fresh, retried_left = retried;
  for (std::size_t i : picks) {
    const int closest = closest_measured(candidates[i]);
    if (closest < 0) {
      if (fresh_left-- > 0) moves.push_back(i);
    } else if (variant_distance(base, candidates[i]) < closest) {
      if (retried_left-- > 0) moves.push_back(i);
    }
  }
  return moves;
}

std::vector<std::size_t> search_bases(const std::vector<GemmConfig>& by_time) {
  std::vector<std::size_t> bases;
  for (std::size_t i = 0; i < by_time.size(); ++i) {
    const bool family_seen = std::any_of(bases.begin(), bases.end(), [&](std::size_t j) {
      return by_time[j].family == by_time[i].family && by_time[j].swap_ab == by_time[i].swap_ab;
    });
    if (bases.size() < 2 || !family_seen) bases.push_back(i);
  }
  return bases;
}

}  // namespace kt::tune
