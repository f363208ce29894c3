// Terse builders of GEMM problems and configs for the tests of every tier.
#pragma once

#include <cstdint>
#include <vector>

#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/gemm_small_m.hpp"

namespace kt::testing {

inline GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k,
                           Layout layout = Layout::kNT, DType in = DType::kBF16,
                           DType out = DType::kBF16) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.layout = layout;
  p.in_dtype = in;
  p.out_dtype = out;
  return p;
}

// A problem from an "MxNxK" shape string with the given layout and dtypes.
inline GemmProblem shaped_problem(const char* shape, Layout layout, DType in, DType out) {
  GemmProblem p;
  p.in_dtype = in;
  p.out_dtype = out;
  p.layout = layout;
  parse_gemm_shape(shape, p);
  return p;
}

// An sm80 config with raster group 8.
inline GemmConfig config(int bm, int bn, int bk, int wm, int wn, int stages, int split_k = 1) {
  return GemmConfig{GemmFamily::kSm80, bm, bn, bk, wm, wn, stages, 8, split_k};
}

// An sm90 config (tile_k 64) with raster group 8; epilogue 0 stores directly, cluster 1 has no
// multicast.
inline GemmConfig sm90_config(int bm, int bn, int stages, int consumers, int split_k = 1,
                              int epilogue = 0, int cluster = 1) {
  return GemmConfig{GemmFamily::kSm90, bm,        bn,       64,     0, 0, stages, 8,
                    split_k,           consumers, epilogue, cluster};
}

// An sm90 split-K config whose split_k splits of a tile run in one cluster (cluster_k).
inline GemmConfig sm90_cluster_split_config(int bm, int bn, int stages, int consumers,
                                            int split_k) {
  GemmConfig c = sm90_config(bm, bn, stages, consumers, split_k);
  c.cluster_k = split_k;
  return c;
}

// The same config in pairs along N (cn2): two horizontally adjacent tiles share A by multicast.
inline GemmConfig pairs_along_n(GemmConfig c) {
  c.cluster_n = 2;
  return c;
}

// The same config as swap-AB (the kernel computes C^T = B·A^T; nt only).
inline GemmConfig swapped(GemmConfig c) {
  c.swap_ab = true;
  return c;
}

// The same config with stages several swizzle atoms deep (tile_k 128 or 256).
inline GemmConfig deep_stages(GemmConfig c, int tile_k) {
  c.tile_k = tile_k;
  return c;
}

// The same config with stream-K (the units past the last whole wave shared out by K).
inline GemmConfig streamed(GemmConfig c) {
  c.stream_k = true;
  return c;
}

// The same config without warp specialization (no producer warpgroup: the consumers' first
// thread issues the loads).
inline GemmConfig unspecialized(GemmConfig c) {
  c.warp_specialized = false;
  return c;
}

// The sm90 configs we ship as known-good starting points: the 128 x 256 flagship and its
// 256 x 128 twin, narrower two-consumer tiles, one-consumer tiles for small M or N, and split-K
// (reduced in the kernel: 1536^2 x 8192's 128 x 192 sk4 with TMA stores, 512^2 x 32768's
// 128 x 256 sk16, a one-consumer sk3 in clusters); each family member also with the TMA-store
// epilogue (e > 0) and clusters of 2 (cl2); the nt-only 128 x 144 tile (1536^2: one tile per SM)
// alone, in clusters, with split-K and with the TMA-store epilogue (72-column slabs); the nt-only
// 64 x 32 decode tile with a 12-stage ring, with split-K and with 16-column TMA-store slabs;
// split-K with a tile's splits in one cluster (clk: 512^2 x 32768's 128 x 128 clk8, 128 x 256
// clk4, one-consumer clk2 and clk4, the 64 x 32 decode tile clk4); swap-AB for decode steps
// (nt: 16-, 32- and 64-token tiles of 64 or 128 weight rows, unsplit, split through L2, split in
// cluster pairs, and a pair along the weights sharing the token tile); stages two or four atoms
// deep for a 16-token decode tile and two for a 64 x 64 tile with TMA stores; pairs along N
// sharing A (cn2: two token tiles on one weight tile, swapped; 512^2 x 32768's 128 x 64 split 4;
// a 128 x 128 tile with TMA stores); stream-K for the flagship (both epilogues), a narrower
// two-consumer tile and a one-consumer tile; without warp specialization the flagship (both
// epilogues), the 128 x 144 tile with TMA stores, one consumer of 64 and of 128 rows, and a
// 64 x 64 tile with stages two atoms deep.
// The nvrtc tier compiles each cleanly; the gpu tier checks each on ragged shapes.
inline const std::vector<GemmConfig>& shipped_sm90_configs() {
  static const std::vector<GemmConfig> all = {
      sm90_config(128, 256, 4, 2),
      sm90_config(256, 128, 4, 2),
      sm90_config(128, 192, 4, 2),
      sm90_config(128, 128, 5, 2),
      sm90_config(128, 128, 4, 1),
      sm90_config(64, 128, 6, 1),
      sm90_config(64, 64, 6, 1),
      sm90_config(128, 128, 4, 2, 4),
      sm90_config(128, 256, 4, 2, 1, 2, 2),
      sm90_config(128, 256, 3, 2, 1, 4, 1),
      sm90_config(256, 128, 4, 2, 1, 1, 2),
      sm90_config(128, 192, 4, 2, 1, 3, 2),
      sm90_config(128, 128, 5, 2, 1, 2, 2),
      sm90_config(64, 128, 6, 1, 1, 2, 2),
      sm90_config(128, 128, 4, 2, 4, 0, 2),
      sm90_config(128, 192, 4, 2, 4, 2),
      sm90_config(128, 256, 4, 2, 16),
      sm90_config(64, 128, 6, 1, 3, 2, 2),
      sm90_config(128, 144, 4, 2),
      sm90_config(128, 144, 5, 2, 1, 0, 2),
      sm90_config(128, 144, 4, 2, 4),
      sm90_config(64, 32, 12, 1),
      sm90_config(64, 32, 6, 1, 2),
      sm90_config(128, 144, 5, 2, 1, 2),
      sm90_config(128, 144, 4, 2, 1, 1, 2),
      sm90_config(64, 32, 12, 1, 1, 2),
      sm90_cluster_split_config(128, 128, 4, 2, 8),
      sm90_cluster_split_config(128, 256, 4, 2, 4),
      sm90_cluster_split_config(64, 128, 6, 1, 2),
      sm90_cluster_split_config(128, 128, 4, 1, 4),
      sm90_cluster_split_config(64, 32, 12, 1, 4),
      swapped(sm90_config(64, 16, 12, 1)),
      swapped(sm90_config(64, 32, 12, 1, 2)),
      swapped(sm90_config(128, 16, 8, 2)),
      swapped(sm90_cluster_split_config(64, 64, 12, 1, 2)),
      swapped(sm90_config(64, 64, 8, 1, 1, 0, 2)),
      swapped(deep_stages(sm90_config(64, 16, 8, 1), 128)),
      deep_stages(sm90_config(64, 64, 6, 1, 1, 1), 128),
      swapped(deep_stages(sm90_config(64, 16, 5, 1), 256)),
      pairs_along_n(swapped(sm90_config(64, 32, 12, 1))),
      pairs_along_n(swapped(deep_stages(sm90_config(64, 32, 8, 1), 128))),
      pairs_along_n(sm90_config(128, 64, 8, 2, 4)),
      pairs_along_n(sm90_config(128, 128, 4, 2, 1, 2)),
      streamed(sm90_config(128, 256, 4, 2, 1, 2)),
      streamed(sm90_config(128, 256, 4, 2)),
      streamed(sm90_config(128, 128, 5, 2, 1, 2)),
      streamed(sm90_config(64, 128, 6, 1, 1, 2)),
      unspecialized(sm90_config(128, 256, 4, 2)),
      unspecialized(sm90_config(128, 256, 4, 2, 1, 2)),
      unspecialized(sm90_config(128, 144, 4, 2, 1, 2)),
      unspecialized(sm90_config(64, 128, 6, 1)),
      unspecialized(sm90_config(128, 128, 4, 1)),
      unspecialized(deep_stages(sm90_config(64, 64, 6, 1, 1, 1), 128))};
  return all;
}

// The small-M configs we ship as known-good starting points for decoding shapes (M <= 64): at
// 8, 16, 32 and 64 rows of C per CTA, narrow nt-only warps (16 or 32 columns) with 8 warps
// along K (16-column CTAs: 256 CTAs at N = 4096, two per SM), 64-column warps that serve nn
// too, and split-K. The nvrtc tier compiles each cleanly
// (sm_90a, sm_80); the gpu tier checks each on ragged shapes.
inline const std::vector<GemmConfig>& shipped_small_m_configs() {
  static const std::vector<GemmConfig> all = {
      small_m_config(8, 16, 256, 16, 8),    small_m_config(8, 32, 128, 32, 8),
      small_m_config(8, 64, 64, 64, 4),     small_m_config(16, 32, 128, 32, 8),
      small_m_config(16, 64, 64, 64, 4),    small_m_config(16, 128, 32, 64, 4),
      small_m_config(32, 32, 64, 32, 8),    small_m_config(32, 64, 32, 64, 4),
      small_m_config(64, 32, 64, 32, 4),    small_m_config(64, 32, 32, 32, 8),
      small_m_config(8, 64, 64, 64, 4, 2),  small_m_config(16, 64, 64, 64, 4, 2),
      small_m_config(64, 32, 32, 32, 4, 4), small_m_config(16, 16, 128, 16, 8),
      small_m_config(64, 16, 64, 16, 8)};
  return all;
}

}  // namespace kt::testing
