// OpTuning's defaults: one search round of the model's first candidates (the cap, else the first
// round's size; model_top_search, also the wide search), and the whole-space search some ops
// take instead; bench, dispatch overhead and trace refused for an op that does not provide them.
#include "tuner/op_tuning.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/op_registry.hpp"

namespace kt::tune {

namespace {

std::string op_name(std::string_view problem_key) { return op_spec_for_key(problem_key).name(); }

class ModelTopSearch final : public OpSearch {
 public:
  ModelTopSearch(std::size_t num_ranked, std::size_t count) : count_(std::min(num_ranked, count)) {}
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

std::unique_ptr<OpSearch> model_top_search(std::size_t num_ranked, std::size_t count) {
  return std::make_unique<ModelTopSearch>(num_ranked, count);
}

std::unique_ptr<OpSearch> whole_space_search(std::size_t num_ranked, const SearchOptions& options) {
  return model_top_search(
      num_ranked, options.max_candidates > 0 ? std::size_t(options.max_candidates) : num_ranked);
}

std::unique_ptr<OpSearch> OpTuning::start_search(std::string_view,
                                                 const std::vector<RankedConfigKey>& ranked,
                                                 const SearchOptions& options) const {
  const int count = options.max_candidates > 0 ? options.max_candidates : options.first_round;
  return model_top_search(ranked.size(), std::size_t(std::max(count, 0)));
}

std::unique_ptr<OpSearch> WholeSpaceTuning::start_search(std::string_view,
                                                         const std::vector<RankedConfigKey>& ranked,
                                                         const SearchOptions& options) const {
  return whole_space_search(ranked.size(), options);
}

OpBenchRow OpTuning::bench(Runtime&, std::string_view problem_key, const OpBenchOptions&) const {
  const std::string op = op_name(problem_key);
  throw Error(ErrorKind::kUnsupported,
              fmt::format("`kerntune bench` has no {0} harness; {0} is timed beside its "
                          "baselines by bench/{0}_vs_torch.sh",
                          op));
}

DispatchOverhead OpTuning::dispatch_overhead(Runtime&, std::string_view problem_key,
                                             const std::string&) const {
  throw Error(ErrorKind::kUnsupported,
              fmt::format("--dispatch-overhead is measured for gemm; {} has no raw-launch harness",
                          op_name(problem_key)));
}

void OpTuning::check_traceable(std::string_view problem_key, std::string_view) const {
  throw Error(ErrorKind::kUnsupported,
              fmt::format("trace reads phase marks that only the sm90 GEMM and fa3 attention "
                          "templates carry; {} kernels have none",
                          op_name(problem_key)));
}

KernelTrace OpTuning::trace(std::string_view problem_key, std::string_view config_key, int) const {
  check_traceable(problem_key, config_key);
  return {};
}

}  // namespace kt::tune
