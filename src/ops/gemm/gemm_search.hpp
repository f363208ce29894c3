// The GEMM search's notions of a tile shape: which configs are variants of one shape (they differ
// only in stages, epilogue, cluster or raster order), which shapes neighbour each other (one
// step of a local search around the best measured shape), and which measured shapes the local
// search starts from.
#pragma once

#include <cstddef>
#include <vector>

#include "core/gemm_config.hpp"

namespace kt::tune {

// Same family and orientation (swap-AB), tile, warp layout, consumers, split and warps along K.
bool same_shape(const GemmConfig& a, const GemmConfig& b);

// c's shape is one step from best's: the same family, orientation and consumers, and either
// exactly one of tile_m, tile_n, split_k halved or doubled, or tile_n (or tile_m) and split_k
// both halved or both doubled — the same number of work units cut another way.
bool neighbour_shape(const GemmConfig& best, const GemmConfig& c);

// How many of the fields a shape leaves free (tile_k, stages, epilogue, cluster, raster group,
// and for sm80 and small-M the warp layout) differ between a and b: a step of the local search
// moves the shape and keeps the rest of what measured best, as far as the new shape allows.
int variant_distance(const GemmConfig& a, const GemmConfig& b);

// How many of the warp layout's fields (warp_m, warp_n, warps_k) differ: among a shape's
// neighbours, those that keep its warp layout are the one-step moves (a small-M tile has a dozen
// neighbours that also re-cut its warps).
int warp_layout_distance(const GemmConfig& a, const GemmConfig& b);

// A local round's moves from `base`, as indices into `candidates` (model order): for each shape
// neighbouring base's (neighbour_shape), its config closest to base (variant_distance, model
// order breaking ties). A shape with a config in `measured` is moved to again only with a config
// closer to base than every measured one of that shape (round 1 may have timed it with a poor
// variant: 16 x 4096 x 4096's 16-row small-M tile ran 21.2 us with 64-deep batches and 17.1 with
// the 128-deep ones of the 8-row best). Shapes that keep base's warp layout come first (model
// order among equals); at most `fresh` shapes none of whose configs was measured, and at most
// `retried` measured ones.
std::vector<std::size_t> neighbour_moves(const GemmConfig& base,
                                         const std::vector<GemmConfig>& candidates,
                                         const std::vector<GemmConfig>& measured, int fresh,
                                         int retried);

// The measured configs the local rounds search around, as indices into `by_time` (fastest first):
// the two fastest, then the fastest of every family (sm90 swap-AB counting as its own) not among
// them, in time order.
std::vector<std::size_t> search_bases(const std::vector<GemmConfig>& by_time);

}  // namespace kt::tune
