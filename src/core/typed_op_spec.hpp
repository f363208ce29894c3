// An OpSpec over an op's own problem and config types: the key-taking entry points parse the keys
// once and call typed ones (by default the op's validate, estimate and explain_config), so the
// parsing, the catching, the ranking and the key plumbing live here once.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/op_spec.hpp"

namespace kt {

// ParseProblem and ParseConfig are the op's key parsers (parse_gemm_key, ...): both throw
// kt::Error (invalid argument) naming the problem with the key.
template <typename Problem, typename Config, Problem (*ParseProblem)(std::string_view),
          Config (*ParseConfig)(std::string_view)>
class TypedOpSpec : public OpSpec {
 public:
  Problem parse_problem(std::string_view problem_key) const { return ParseProblem(problem_key); }
  Config parse_config(std::string_view config_key) const { return ParseConfig(config_key); }
  // The op's config space for `problem` on `device` (valid configs only), in its own order.
  virtual std::vector<Config> configs_for(const Problem& problem,
                                          const DeviceDesc& device) const = 0;
  // By default the op's own free functions, found by argument-dependent lookup beside its types:
  // validate(p, c, device) (why `config` cannot serve `problem` on `device`, or nullopt),
  // estimate(p, c, device, registers).predicted_us and explain_config(p, c, device).
  virtual std::optional<std::string> validate_for(const Problem& problem, const Config& config,
                                                  const DeviceDesc& device) const {
    return validate(problem, config, device);
  }
  virtual double predict_us(const Problem& problem, const Config& config, const DeviceDesc& device,
                            int registers) const {
    return estimate(problem, config, device, registers).predicted_us;
  }
  virtual std::string explain_for(const Problem& problem, const Config& config,
                                  const DeviceDesc& device) const {
    return explain_config(problem, config, device);
  }
  virtual std::int64_t workspace_for(const Problem& /*problem*/, const Config& /*config*/,
                                     const DeviceDesc& /*device*/) const {
    return 0;
  }
  // Whether reports give `problem`'s rate in bytes against a copy's (ProblemSummary); by default
  // not.
  virtual bool memory_bound(const Problem& /*problem*/) const { return false; }
  // By default none: an op names its tile's fields by overriding this.
  virtual std::optional<ConfigTile> tile_for(const Config& /*config*/) const {
    return std::nullopt;
  }
  // By default the estimate's `waves` where that is a WaveStats (GEMM's and attention's models),
  // else none.
  virtual std::optional<WaveStats> waves_for(const Problem& problem, const Config& config,
                                             const DeviceDesc& device) const {
    const auto e = estimate(problem, config, device, 0);
    if constexpr (requires { requires std::same_as<decltype(e.waves), WaveStats>; })
      return e.waves;
    else
      return std::nullopt;
  }

  // The problem's own flops() and min_bytes(), and memory_bound.
  ProblemSummary summarize(std::string_view problem_key) const final {
    const Problem problem = parse_problem(problem_key);
    return {problem.flops(), problem.min_bytes(), memory_bound(problem)};
  }

  void check_config_key(std::string_view config_key) const final { parse_config(config_key); }

  // configs_for ranked by predict_us (estimated registers); ties keep the space's order.
  std::vector<RankedConfigKey> ranked_configs(std::string_view problem_key,
                                              const DeviceDesc& device) const final {
    const Problem problem = parse_problem(problem_key);
    std::vector<RankedConfigKey> out;
    for (const Config& config : configs_for(problem, device))
      out.push_back({to_key(config), predict_us(problem, config, device, 0)});
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.predicted_us < b.predicted_us; });
    return out;
  }

  std::optional<std::string> validate_config(std::string_view problem_key,
                                             std::string_view config_key,
                                             const DeviceDesc& device) const final {
    try {
      return validate_for(parse_problem(problem_key), parse_config(config_key), device);
    } catch (const Error& e) {
      return std::string(e.what());
    }
  }

  double predicted_us(std::string_view problem_key, std::string_view config_key,
                      const DeviceDesc& device, int registers) const final {
    return predict_us(parse_problem(problem_key), parse_config(config_key), device, registers);
  }

  std::int64_t workspace_bytes(std::string_view problem_key, std::string_view config_key,
                               const DeviceDesc& device) const final {
    return workspace_for(parse_problem(problem_key), parse_config(config_key), device);
  }

  std::optional<ConfigTile> tile_of(std::string_view config_key) const final {
    return tile_for(parse_config(config_key));
  }

  std::optional<WaveStats> waves(std::string_view problem_key, std::string_view config_key,
                                 const DeviceDesc& device) const final {
    return waves_for(parse_problem(problem_key), parse_config(config_key), device);
  }

  std::string explain(std::string_view problem_key, std::string_view config_key,
                      const DeviceDesc& device) const final {
    return explain_for(parse_problem(problem_key), parse_config(config_key), device);
  }
};

}  // namespace kt
