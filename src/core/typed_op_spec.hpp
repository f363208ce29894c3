// An OpSpec over an op's own problem and config types: the key-taking entry points parse the keys
// once and call typed ones (by default the op's validate, estimate and explain_config), so the
// parsing, the catching and the key plumbing live here once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/op_spec.hpp"

namespace kt {

template <typename Problem, typename Config>
class TypedOpSpec : public OpSpec {
 public:
  // Both throw kt::Error (invalid argument) naming the problem with the key.
  virtual Problem parse_problem(std::string_view problem_key) const = 0;
  virtual Config parse_config(std::string_view config_key) const = 0;
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

  void check_config_key(std::string_view config_key) const final { parse_config(config_key); }

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

  std::string explain(std::string_view problem_key, std::string_view config_key,
                      const DeviceDesc& device) const final {
    return explain_for(parse_problem(problem_key), parse_config(config_key), device);
  }
};

}  // namespace kt
