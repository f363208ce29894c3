// OpTuning's default search: one round of the model's first candidates (the cap, else the first
// round's size).
#include "tuner/op_tuning.hpp"

#include <algorithm>

namespace kt::tune {

namespace {

class ModelTopSearch final : public OpSearch {
 public:
  ModelTopSearch(std::size_t num_ranked, int max_candidates)
      : count_(std::min(num_ranked, std::size_t(std::max(max_candidates, 0)))) {}
  std::vector<std::size_t> next_round(const std::vector<SearchedConfig>& searched) override {
    if (!searched.empty()) return {};
    std::vector<std::size_t> out(count_);
    for (std::size_t i = 0; i < count_; ++i) out[i] = i;
    return out;
  }

 private:
  std::size_t count_;
};

}  // namespace

std::unique_ptr<OpSearch> OpTuning::start_search(std::string_view,
                                                 const std::vector<RankedConfigKey>& ranked,
                                                 const SearchOptions& options) const {
  return std::make_unique<ModelTopSearch>(
      ranked.size(), options.max_candidates > 0 ? options.max_candidates : options.first_round);
}

}  // namespace kt::tune
