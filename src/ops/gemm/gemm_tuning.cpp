// GEMM's tuner facet: the workload behind BenchTarget (operand sets rotated while timing) and
// the search: round 1 the model's best config of each distinct tile shape, then local rounds
// around the best measured shapes (their variants, then their neighbouring shapes).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/gemm_config.hpp"
#include "ops/gemm/gemm_bench.hpp"
#include "ops/gemm/gemm_kernel.hpp"
#include "ops/gemm/gemm_op.hpp"
#include "ops/gemm/gemm_search.hpp"
#include "ops/gemm/gemm_trace.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "tuner/op_tuning.hpp"

namespace kt {

namespace {

// Round 1 measures at least this many small-M tile shapes when the problem has them (M <= 64):
// the sm80/sm90 models do not see the bandwidth their few CTAs leave unused at small M, so model
// order alone could keep the family from being measured.
constexpr int kSmallMFirstRoundShapes = 8;
// A local round's neighbouring shapes per base (neighbour_moves), and shapes timed before with a
// variant farther from the base than their closest config.
constexpr int kNeighbourShapes = 6;
constexpr int kRetriedShapes = 2;
// Local rounds after the first, at most: each searches around the bases no earlier round
// searched, so a shape found in round 2 gets its own neighbours in round 3.
constexpr int kLocalRounds = 3;
// A shape timed more than this many times the best is searched around by no local round: a
// family that far behind (sm80 on the H200 at the foundation's compute-bound shapes, small-M at
// 64-token steps) stayed 1.6-2.2x behind after three local rounds around it, and its candidates
// were a quarter to a half of those shapes'.
constexpr double kBaseSlowdownLimit = 1.5;

class GemmTarget final : public tune::BenchTarget {
 public:
  explicit GemmTarget(const tune::BenchTargetArgs& a)
      : problem_(parse_gemm_key(a.problem_key)),
        modules_(*a.modules),
        work_(problem_, a.device, a.db, *a.modules, a.stream, a.seed, a.workspace_bytes,
              tune::timing_operand_sets(problem_)) {}

  void load(const std::string& config_key, const cache::CubinRecord& cubin) override {
    if (kernels_.count(config_key)) return;
    kernels_[config_key] =
        rt::GemmKernel(problem_, parse_gemm_config_key(config_key), modules_.load(cubin));
  }
  CUresult launch(const std::string& config_key, CUstream s, int set) override {
    const tune::GemmOperands o = work_.operands(set);
    return kernels_.at(config_key).launch(o.a, o.b, o.c, work_.workspace(), s);
  }
  int num_operand_sets() const override { return work_.num_operand_sets(); }
  void poison_output() override { work_.poison_output(); }
  tune::OutputCheck check_output() override { return work_.check_output(); }

 private:
  GemmProblem problem_;
  rt::ModuleCache& modules_;
  tune::GemmWorkload work_;
  std::map<std::string, rt::GemmKernel> kernels_;
};

class GemmSearch final : public tune::OpSearch {
 public:
  GemmSearch(const std::vector<RankedConfigKey>& ranked, const tune::SearchOptions& options)
      : options_(options) {
    for (const RankedConfigKey& r : ranked) configs_.push_back(parse_gemm_config_key(r.config_key));
  }

  std::vector<std::size_t> next_round(const std::vector<tune::SearchedConfig>& searched) override {
    if (searched.empty()) return first_round();
    if (++round_ > kLocalRounds) return {};
    return local_round(searched, searched_);
  }
  std::vector<std::size_t> preview(
      const std::vector<tune::SearchedConfig>& searched) const override {
    if (searched.empty() || round_ + 1 > kLocalRounds) return {};
    std::vector<GemmConfig> bases = searched_;
    return local_round(searched, bases);
  }

 private:
  // The model's best config of each distinct tile shape (small-M shapes first, up to
  // kSmallMFirstRoundShapes), in model order.
  std::vector<std::size_t> first_round() const {
    std::vector<std::size_t> out;
    auto add_distinct_shapes = [&](bool small_m_only, int limit) {
      for (std::size_t i = 0; i < configs_.size() && int(out.size()) < limit; ++i) {
        if (small_m_only && configs_[i].family != GemmFamily::kSmallM) continue;
        if (std::any_of(out.begin(), out.end(),
                        [&](std::size_t j) { return tune::same_shape(configs_[j], configs_[i]); }))
          continue;
        out.push_back(i);
      }
    };
    // Under a cap the first round takes at most the cap; the local rounds get what is left.
    const int size = options_.max_candidates > 0
                         ? std::min(options_.first_round, options_.max_candidates)
                         : options_.first_round;
    add_distinct_shapes(true, std::min(kSmallMFirstRoundShapes, size));
    add_distinct_shapes(false, size);
    std::sort(out.begin(), out.end());  // model order
    return out;
  }

  // For the two best shapes so far and the best of each other family (search_bases), those no
  // earlier round searched (searched_bases, which gains them): their other variants in model
  // order, then the shapes next to them.
  std::vector<std::size_t> local_round(const std::vector<tune::SearchedConfig>& searched,
                                       std::vector<GemmConfig>& searched_bases) const {
    std::vector<std::pair<double, GemmConfig>> timed;
    std::vector<GemmConfig> tried;
    for (const auto& s : searched) {
      tried.push_back(parse_gemm_config_key(s.config_key));
      if (s.us) timed.emplace_back(*s.us, tried.back());
    }
    std::stable_sort(timed.begin(), timed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<GemmConfig> by_time;
    for (const auto& t : timed)
      if (t.first <= kBaseSlowdownLimit * timed.front().first) by_time.push_back(t.second);
    std::vector<GemmConfig> bases;
    for (std::size_t i : tune::search_bases(by_time)) {
      if (std::find(searched_bases.begin(), searched_bases.end(), by_time[i]) !=
          searched_bases.end())
        continue;
      searched_bases.push_back(by_time[i]);
      bases.push_back(by_time[i]);
    }
    std::vector<std::size_t> out;
    auto seen = [&](std::size_t i) {
      return std::find(tried.begin(), tried.end(), configs_[i]) != tried.end() ||
             std::find(out.begin(), out.end(), i) != out.end();
    };
    for (const GemmConfig& base : bases) {
      int added = 0;
      for (std::size_t i = 0; i < configs_.size() && added < options_.refine_per_shape; ++i) {
        if (!tune::same_shape(configs_[i], base) || seen(i)) continue;
        out.push_back(i);
        ++added;
      }
    }
    for (const GemmConfig& base : bases) {
      std::vector<GemmConfig> measured = tried;
      for (std::size_t i : out) measured.push_back(configs_[i]);
      for (std::size_t i :
           tune::neighbour_moves(base, configs_, measured, kNeighbourShapes, kRetriedShapes))
        out.push_back(i);
    }
    return out;
  }

  tune::SearchOptions options_;
  std::vector<GemmConfig> configs_;   // the ranking's configs, parsed
  std::vector<GemmConfig> searched_;  // bases searched around
  int round_ = 0;
};

class GemmTuning final : public tune::OpTuning {
 public:
  std::unique_ptr<tune::BenchTarget> make_bench_target(
      const tune::BenchTargetArgs& args) const override {
    return std::make_unique<GemmTarget>(args);
  }
  std::unique_ptr<tune::OpSearch> start_search(std::string_view,
                                               const std::vector<RankedConfigKey>& ranked,
                                               const tune::SearchOptions& options) const override {
    return std::make_unique<GemmSearch>(ranked, options);
  }
  tune::OpBenchRow bench(Runtime& runtime, std::string_view problem_key,
                         const tune::OpBenchOptions& options) const override {
    return tune::bench_gemm(runtime, parse_gemm_key(problem_key), options);
  }
  tune::DispatchOverhead dispatch_overhead(Runtime& runtime, std::string_view problem_key,
                                           const std::string& database_path) const override {
    return tune::measure_dispatch_overhead(runtime, parse_gemm_key(problem_key), database_path);
  }
  void check_traceable(std::string_view, std::string_view config_key) const override {
    tune::require_phase_marks(parse_gemm_config_key(config_key));
  }
  tune::KernelTrace trace(std::string_view problem_key, std::string_view config_key,
                          int reps) const override {
    return tune::trace_gemm(parse_gemm_key(problem_key), parse_gemm_config_key(config_key), reps);
  }
};

}  // namespace

std::shared_ptr<const tune::OpTuning> make_gemm_tuning() { return std::make_shared<GemmTuning>(); }

}  // namespace kt
