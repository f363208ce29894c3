// Where two bundles' winners differ and by how much: per tuning key, the winner each holds, its
// time, and each side's time for the other's winner where that side measured it too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"

namespace kt::fleet {

struct WinnerChange {
  cache::TuningKey key;
  std::optional<cache::Winner> a;  // empty: only b has one
  std::optional<cache::Winner> b;  // empty: only a has one
  // a's time for b's winner and b's time for a's winner (their fastest ok or predicted row),
  // where that side has one: the same config on both sides compares like with like.
  std::optional<double> a_us_of_b_config;
  std::optional<double> b_us_of_a_config;
  // b's winner time over a's (both present): < 1 means b's winner is faster.
  std::optional<double> ratio() const;
};

struct BundleDiff {
  int num_same = 0;                   // keys both hold with the same config
  std::vector<WinnerChange> changes;  // other configs, or only one side; by key
};

// Compares the winners of `a` and `b` (every key of either).
BundleDiff diff_bundles(const cache::Database& a, const cache::Database& b);

}  // namespace kt::fleet
