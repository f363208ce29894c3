// The order in which a persistent fa3 grid works its query blocks: one computation shared verbatim
// by the host (the section size in the parameter block, the CPU tests) and the device
// (attention_fwd_sm90.cuh's fa3::cta_tile): plain C++, no CUDA.
#pragma once

#if defined(__CUDACC__)
#define KT_TILE_ORDER_FN __host__ __device__
#else
#define KT_TILE_ORDER_FN
#endif

namespace kt {
namespace fa3 {

// A query block of the order: its index (0 holds the first rows) and its (head, batch) entry,
// head fastest (entry = head + heads_q · batch).
struct TileSlot {
  int m_block;
  int entry;
};

// The `index`-th of the m_blocks · entries tiles. Full masks: query blocks fastest, then entries,
// as the non-persistent grid, so the CTAs at work at once share their entries' K and V in L2.
// Causal: the entries in sections of `section` (the last one the rest), each section's tiles
// longest query block first with its entries fastest: the longest-first order keeps the CTAs'
// sums of work even, and a section's K and V stay in L2 while each of its query blocks reads them
// (the order over all entries at once read them from DRAM once a query block).
constexpr KT_TILE_ORDER_FN TileSlot tile_slot(int index, int m_blocks, int entries, bool causal,
                                              int section) {
  if (!causal) return {index % m_blocks, index / m_blocks};
  const int width_max = section < 1 ? 1 : section < entries ? section : entries;
  const int per_section = width_max * m_blocks;
  const int first = index / per_section * width_max;
  const int width = entries - first < width_max ? entries - first : width_max;
  const int in_section = index % per_section;
  return {m_blocks - 1 - in_section / width, first + in_section % width};
}

// The tile order's index of a persistent CTA's `turn`-th tile: CTA j of `grid` works j, 2G - 1 - j,
// 2G + j, 4G - 1 - j, ...: a snake, so that over longest-first tiles the CTAs' sums come out even.
constexpr KT_TILE_ORDER_FN int snake_index(int turn, int cta, int grid) {
  return turn * grid + (turn % 2 == 1 ? grid - 1 - cta : cta);
}

// K and V bytes a causal section may hold: well inside the 50 MB L2 of the sm_90 parts, which
// the section's Q and O stream through beside them.
constexpr long long kCausalSectionBytes = 32ll << 20;

// The entries of a causal section: the most, a power of two, whose K and V (`kv_bytes_per_entry`,
// a KV head's K and V over the query heads that share it) fit kCausalSectionBytes; at least 1.
constexpr KT_TILE_ORDER_FN int causal_section(long long kv_bytes_per_entry) {
  int section = 1;
  while (section < (1 << 30) && 2ll * section * kv_bytes_per_entry <= kCausalSectionBytes)
    section *= 2;
  return section;
}

}  // namespace fa3
}  // namespace kt
