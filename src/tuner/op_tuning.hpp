// The tuner's facet of an op: its workload on the GPU (inputs on fresh random data, outputs
// poisoned, the reference check) behind BenchTarget, and its search over the model's ranking.
// `kerntune bench` and `trace` go through it too. Registered with the op (core/op_registry.hpp);
// the tune loop (problem_tuner.hpp), the benchmark worker and the CLI reach it by problem key.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_spec.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/bench_target.hpp"
#include "tuner/op_bench.hpp"

namespace kt::tune {

struct BenchTargetArgs {
  std::string problem_key;
  DeviceDesc device;
  cache::Database* db = nullptr;  // check kernels come from it, else NVRTC; may be null
  rt::ModuleCache* modules = nullptr;
  CUstream stream = nullptr;
  std::uint64_t seed = 0;
  std::size_t workspace_bytes = 0;
};

// A candidate the search has seen: its config, and its measured (or, predicting, the model's)
// time; nullopt when it failed or was rejected.
struct SearchedConfig {
  std::string config_key;
  std::optional<double> us;
};

struct SearchOptions {
  int first_round = 24;  // the first round's size (the default search: the model's top N)
  // At most this many candidates over every round (0: no cap). The tune loop enforces it by
  // cutting each round to what is left; a search may plan for it (a smaller first round).
  int max_candidates = 0;
  int refine_per_shape = 8;  // an op's later rounds: variants tried around each base
  bool predicted = false;    // times are the model's, not measurements
};

// One search over the model's ranking of a problem's valid configs, round by round.
class OpSearch {
 public:
  virtual ~OpSearch() = default;
  // The next round: indices into the ranking, none tried before; empty ends the search.
  // `searched` holds every candidate of the rounds before, in the order they were given.
  virtual std::vector<std::size_t> next_round(const std::vector<SearchedConfig>& searched) = 0;
  // What next_round would give for `searched` (every candidate so far, those not measured yet
  // without a time), without advancing the search: the tuner compiles it ahead while a round's
  // last candidates compile and measure. Default: nothing (no later round worth guessing).
  virtual std::vector<std::size_t> preview(const std::vector<SearchedConfig>& /*searched*/) const {
    return {};
  }
};

// One round of the ranking's first min(count, num_ranked) configs: the default search, and the
// wide search of `kerntune tune --search wide`.
std::unique_ptr<OpSearch> model_top_search(std::size_t num_ranked, std::size_t count);

// One round of all `num_ranked` configs, cut to options.max_candidates in model order when
// that is set: the search of an op whose whole space is worth measuring.
std::unique_ptr<OpSearch> whole_space_search(std::size_t num_ranked, const SearchOptions& options);

class OpTuning {
 public:
  virtual ~OpTuning() = default;

  // The problem instantiated on the GPU; throws kt::Error (CUDA, memory).
  virtual std::unique_ptr<BenchTarget> make_bench_target(const BenchTargetArgs& args) const = 0;

  // The search for `problem_key` over `ranked` (its valid configs, best predicted first).
  // Default: one round of the model's first max_candidates, or first_round when uncapped.
  virtual std::unique_ptr<OpSearch> start_search(std::string_view problem_key,
                                                 const std::vector<RankedConfigKey>& ranked,
                                                 const SearchOptions& options) const;

  // `kerntune bench`: the kernel `runtime` dispatches for `problem_key` beside the op's library
  // baseline and a same-bytes copy (op_bench.hpp). Needs a current GPU. Default: kt::Error
  // (unsupported) saying where the op is benchmarked instead.
  virtual OpBenchRow bench(Runtime& runtime, std::string_view problem_key,
                           const OpBenchOptions& options) const;
  // `kerntune bench --dispatch-overhead`: the runtime's host cost on a hit over a raw launch of
  // the same kernel, the database's cubin at `database_path`. Default: kt::Error (unsupported).
  virtual DispatchOverhead dispatch_overhead(Runtime& runtime, std::string_view problem_key,
                                             const std::string& database_path) const;
  // `kerntune trace`: one config's launch phase by phase across its CTAs, from marks its
  // templates compile in under -DKT_TRACE; needs a current GPU. check_traceable throws
  // kt::Error before any device work when the config's kernels carry no marks: unsupported
  // naming the op where none of its kernels do (the default), invalid argument naming the
  // family otherwise; trace's default throws the same.
  virtual void check_traceable(std::string_view problem_key, std::string_view config_key) const;
  virtual KernelTrace trace(std::string_view problem_key, std::string_view config_key,
                            int reps) const;
};

// The facet of an op whose whole space is worth measuring (both attention ops): its search is
// whole_space_search; the op still supplies make_bench_target and what else it overrides.
class WholeSpaceTuning : public OpTuning {
 public:
  std::unique_ptr<OpSearch> start_search(std::string_view problem_key,
                                         const std::vector<RankedConfigKey>& ranked,
                                         const SearchOptions& options) const final;
};

}  // namespace kt::tune
