// Which config serves an attention problem on a device: the tuned winner for that exact problem,
// else the configs tuned for the nearest problems of the same dtype, head_dim and mask
// re-scored by the model, else the model's own pick.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/attention_config.hpp"
#include "runtime/gemm_dispatch.hpp"

namespace kt::rt {

struct AttentionChoice {
  AttentionConfig config;
  DispatchGrade grade = DispatchGrade::kModelDefault;
  std::string tuned_problem_key;
  bool predicted = false;
};

AttentionChoice choose_attention_config(const cache::Database* db, const AttentionProblem& problem,
                                        const DeviceDesc& device);

std::vector<AttentionConfig> model_ranked_attention_configs(const AttentionProblem& problem,
                                                            const DeviceDesc& device,
                                                            std::size_t count);

}  // namespace kt::rt
