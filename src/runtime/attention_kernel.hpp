// An attention-forward kernel ready to launch: loaded function and launch plan (the caller's
// tensors are checked by runtime/call_checks.hpp). launch() allocates nothing.
#pragma once

#include <cuda.h>

#include "attention/attention_params.h"
#include "core/attention_config.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/module_cache.hpp"

namespace kt::rt {

// The kernel parameter block for `tensors` (softmax_scale 0 becomes 1/sqrt(head_dim)).
AttentionParams make_attention_params(const AttentionProblem& problem, const AttentionTensors& tensors);

class AttentionKernel {
 public:
  AttentionKernel() = default;
  AttentionKernel(const AttentionProblem& problem, const AttentionConfig& config,
                  const LoadedModule& module);

  AttentionParams make_params(const AttentionTensors& t) const;
  CUresult launch(const AttentionTensors& t, CUstream stream) const;

  const AttentionProblem& problem() const { return problem_; }
  const AttentionConfig& config() const { return config_; }
  const LaunchPlan& plan() const { return plan_; }

 private:
  AttentionProblem problem_;
  AttentionConfig config_;
  LaunchPlan plan_;
  CUfunction function_ = nullptr;
};

}  // namespace kt::rt
