// A config paired with its model estimate, and the one order in which a model ranks a space:
// fastest predicted first, ties in the order the space was enumerated. GEMM's and the attention
// forward's rank_by_model are this ranking over their own estimates.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

namespace kt {

// `estimate` is any model estimate with a `predicted_us` (microseconds).
template <typename Config, typename Estimate>
struct Ranked {
  Config config;
  Estimate estimate;
};

// Each of `configs` with `estimate_of(config)`, sorted by predicted_us, fastest first; the sort
// is stable, so configs predicted equal keep their order in `configs`.
template <typename Config, typename EstimateOf>
auto rank_by_estimate(const std::vector<Config>& configs, EstimateOf estimate_of) {
  using Estimate = std::invoke_result_t<EstimateOf&, const Config&>;
  std::vector<Ranked<Config, Estimate>> ranked;
  ranked.reserve(configs.size());
  for (const Config& config : configs) ranked.push_back({config, estimate_of(config)});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.estimate.predicted_us < b.estimate.predicted_us;
  });
  return ranked;
}

}  // namespace kt
