// The order in which a grid works blocks × entries items (attention: query or key blocks of each
// (head, batch) entry): one computation shared verbatim by the host (a section's size in the
// parameter blocks, the CPU tests) and the device (the fa3 forward's persistent tiles, both
// backward families' CTAs): plain C++, no CUDA.
#pragma once

#if defined(__CUDACC__)
#define KT_WORK_ORDER_FN __host__ __device__
#else
#define KT_WORK_ORDER_FN
#endif

namespace kt {

// An item of the order: its block (0 first in the order's own terms) and its entry.
struct WorkSlot {
  int block;
  int entry;
};

// The `index`-th of blocks · entries items: the entries in sections of `section` (the last one
// the rest), each section's items block by block with its entries fastest. A section of 1 is
// blocks fastest, entry by entry (the CTAs at work at once share an entry's data in L2). Where
// blocks differ in work, block 0 the longest, larger sections spread the long ones over more
// entries before the short ones come (the longest-first order that keeps the SMs' sums even),
// while a section's data is what stays in L2 (section_entries).
constexpr KT_WORK_ORDER_FN WorkSlot sectioned_slot(int index, int blocks, int entries,
                                                   int section) {
  const int width_max = section < 1 ? 1 : section < entries ? section : entries;
  const int per_section = width_max * blocks;
  const int first = index / per_section * width_max;
  const int width = entries - first < width_max ? entries - first : width_max;
  const int in_section = index % per_section;
  return {in_section / width, first + in_section % width};
}

// The order's index of a persistent CTA's `turn`-th item: CTA j of `grid` works j, 2G - 1 - j,
// 2G + j, 4G - 1 - j, ...: a snake, so that over longest-first items the CTAs' sums come out even.
constexpr KT_WORK_ORDER_FN int snake_index(int turn, int cta, int grid) {
  return turn * grid + (turn % 2 == 1 ? grid - 1 - cta : cta);
}

// The bytes a section's entries may read between them: well inside the 50 MB L2 of the sm_90
// parts, which the rest of the traffic streams through beside them.
constexpr long long kSectionBytes = 32ll << 20;

// The most entries of a section of a grid of one CTA an item, which the hardware starts in order
// as SMs free up (list scheduling evens the SMs' sums at any section size). A section's first wave
// (the 132-264 CTAs the SMs hold) works its longest blocks, each of which reads all its entry's
// shared data from DRAM; CTAs of one entry read it once between them. A CTA of 128 query rows
// reads an entry's K and V at R/128 bytes a second (R its SM's FLOP/s), so a wave over distinct
// entries asks for P/128 (P the GPU's FLOP/s): 7.7 TB/s on the H100, 2.3x what DRAM streams. At
// most 32 entries, a wave's CTAs share an entry by 4 or more and its loads stay within DRAM's
// rate. A persistent grid's fixed snake (snake_index) evens the CTAs' sums only where its turns
// do not straddle sections unevenly, so its sections are chosen for its grid among those the L2
// bound alone allows (kSectionEntriesAny; persistent_causal_section in core/attention_config).
constexpr int kSectionEntriesMax = 32;
constexpr int kSectionEntriesAny = 1 << 30;

// The entries of a section: the most, a power of two up to `max_entries`, whose `bytes_per_entry`
// (the data an entry's blocks share) fit kSectionBytes; at least 1.
constexpr KT_WORK_ORDER_FN int section_entries(long long bytes_per_entry,
                                               int max_entries = kSectionEntriesMax) {
  int section = 1;
  while (section < max_entries && 2ll * section * bytes_per_entry <= kSectionBytes) section *= 2;
  return section;
}

}  // namespace kt
