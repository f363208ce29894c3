// Which config serves a GEMM problem on a device: the tuned winner for that exact shape, else
// the configs tuned for the nearest shapes re-scored by the model, else the model's own pick.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"

namespace kt::rt {

enum class DispatchGrade { kExact, kNearestShape, kModelDefault };
const char* to_string(DispatchGrade grade);

struct GemmChoice {
  GemmConfig config;
  DispatchGrade grade = DispatchGrade::kModelDefault;
  std::string tuned_problem_key;  // the shape the config was tuned on (empty for the model)
  bool predicted = false;         // the winner came from a prediction, not a measurement
};

// db may be null. Configs needing more than max_workspace_bytes are skipped.
GemmChoice choose_gemm_config(const cache::Database* db, const GemmProblem& problem,
                              const DeviceDesc& device, std::int64_t max_workspace_bytes);

// The model's best valid config for `problem` (the last grade).
GemmConfig model_default_config(const GemmProblem& problem, const DeviceDesc& device,
                                std::int64_t max_workspace_bytes);

// The model's configs for `problem` in rank order (the candidates of the last grade).
std::vector<GemmConfig> model_ranked_configs(const GemmProblem& problem, const DeviceDesc& device,
                                             std::int64_t max_workspace_bytes, std::size_t count);

}  // namespace kt::rt
