// Which config serves a problem of any op on a device, graded by how closely the tuning that
// chose it matches: this problem measured on this exact device; on this GPU model with another SM
// count (clocks are not part of a fingerprint); on another GPU of this compute capability, the
// winners re-scored by the model here; the nearest tuned problems on this device, their
// measurements calibrating the model's ranking; this problem's predicted winner (the model's pick
// with compiled registers, stored by a tuner without a GPU); the model's own pick. Configs invalid
// here, or needing more workspace than the caller has, are skipped at every grade.
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

// Every choice for the problem, best first: this problem's measured winners on this device, on
// this GPU model (the nearest SM count) and on this compute capability (re-scored by the model);
// the calibrated nearest candidates (nearest-shape when measured at a neighbour, model-default
// otherwise), ahead of this problem's predicted winner when the best of them was measured at a
// neighbour and after it when it is the model's own; then the model's first `model_tries`
// configs; last, the neighbours' near-best configs the model would not shortlist here (what a
// runtime that cannot compile still has stored). A caller that cannot get one's kernel (no stored
// cubin and no compiler) takes the next. db may be null. Throws kt::Error (unsupported) when no
// config of the space fits.
std::vector<DispatchChoice> ranked_choices(const cache::Database* db, const OpSpec& op,
                                           const std::string& problem_key, const DeviceDesc& device,
                                           std::int64_t max_workspace_bytes,
                                           std::size_t model_tries);

// ranked_choices' head, which costs database lookups only (the rest of the list enumerates the
// op's space): this problem's measured winners on this device, this GPU model and this compute
// capability, then, when no tuned neighbour on this device measured anything (so no nearest-shape
// choice can precede it), its predicted winner. db may be null (then none).
std::vector<DispatchChoice> leading_choices(const cache::Database* db, const OpSpec& op,
                                            const std::string& problem_key,
                                            const DeviceDesc& device,
                                            std::int64_t max_workspace_bytes);

// Benchmark mode's candidates (RuntimeOptions::benchmark_candidates): the first `count` distinct
// configs of ranked_choices with the model's first `count` at its end, best first.
std::vector<DispatchChoice> benchmark_choices(const cache::Database* db, const OpSpec& op,
                                              const std::string& problem_key,
                                              const DeviceDesc& device, std::int64_t max_workspace,
                                              std::size_t count);

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
