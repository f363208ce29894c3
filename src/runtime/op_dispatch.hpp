// Which config serves a problem of any op on a device: the tuned winner for that exact problem,
// else the winners of the nearest tuned problems (the op's distance) re-scored by the model for
// this problem, else the model's own pick. Configs invalid here, or needing more workspace than
// the caller has, are skipped at every grade.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_spec.hpp"

namespace kt::rt {

// Best first (DispatchInfo::grade spells them). kFallback: a call the resolved kernel cannot
// serve, launched with the op's fallback config.
enum class DispatchGrade {
  kExact,
  kSameModel,
  kSameCc,
  kNearestShape,
  kPredicted,
  kModelDefault,
  kFallback
};
const char* to_string(DispatchGrade grade);

struct DispatchChoice {
  std::string config_key;
  DispatchGrade grade = DispatchGrade::kModelDefault;
  std::string tuned_problem_key;  // the problem the config was tuned on (empty for the model)
  bool predicted = false;         // the winner came from a prediction, not a measurement
  std::string tuned_device;       // the device fingerprint it was tuned for (empty for the model)
};

// max(cap_bytes, op.required_workspace_bytes(...)): the workspace the problem's configs may
// use. The runtime and the tuner grant a problem the scratch it cannot run without (attention
// backward's FP32 dQ accumulator) beyond their cap, so the cap bounds what a config may choose
// to use (GEMM's split-K), never whether a problem runs.
std::int64_t workspace_cap_for(const OpSpec& op, const std::string& problem_key,
                               const DeviceDesc& device, std::int64_t cap_bytes);

// Every choice for the problem, best first: the exact winner, the calibrated nearest candidates
// (nearest-shape when measured at a neighbour, model-default otherwise), then the model's first
// `model_tries` configs; a caller that cannot get one's kernel (no stored cubin and no compiler)
// takes the next. db may be null. Throws kt::Error (unsupported) when no config of the space fits.
std::vector<DispatchChoice> ranked_choices(const cache::Database* db, const OpSpec& op,
                                           const std::string& problem_key, const DeviceDesc& device,
                                           std::int64_t max_workspace_bytes,
                                           std::size_t model_tries);

// ranked_choices' first.
DispatchChoice choose_config(const cache::Database* db, const OpSpec& op,
                             const std::string& problem_key, const DeviceDesc& device,
                             std::int64_t max_workspace_bytes);

// The model's first `count` configs for the problem that fit the workspace (the candidates of
// the last grade); throws kt::Error (unsupported) when there are none.
std::vector<std::string> model_ranked_configs(const OpSpec& op, const std::string& problem_key,
                                              const DeviceDesc& device,
                                              std::int64_t max_workspace_bytes, std::size_t count);

}  // namespace kt::rt
