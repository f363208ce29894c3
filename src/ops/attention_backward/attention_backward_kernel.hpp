// An attention backward kernel set ready to launch: the three loaded functions (main,
// preprocess, convert), their launch plans, and the parameter blocks of a call (fa3's main
// kernel: with TMA maps). The caller's tensors are checked by check_attention_backward_call (fa3
// also by TMA's addressing rules: serves()); launch() allocates nothing.
#pragma once

#include <cuda.h>

#include "ops/attention_backward/attention_backward_config.hpp"
#include "ops/attention_backward/kernels/attention_bwd_params.h"
#include "runtime/module_cache.hpp"

namespace kt::rt {

// The parameter block of `tensors` over `workspace` (its layout: attention_backward_workspace;
// softmax_scale 0 becomes 1/sqrt(head_dim)).
AttentionBwdParams make_attention_backward_params(const AttentionBackwardProblem& problem,
                                                  const AttentionBackwardTensors& tensors,
                                                  CUdeviceptr workspace);

// The fa3 main kernel's parameter block: make_attention_backward_params plus the TMA maps of
// AttentionBwdSm90Params for `config`'s boxes. Throws kt::Error (invalid argument) naming the
// tensor when TMA cannot address it; returns the driver's result of encoding.
CUresult make_attention_backward_sm90_params(const AttentionBackwardProblem& problem,
                                             const AttentionBackwardConfig& config,
                                             const AttentionBackwardTensors& tensors,
                                             CUdeviceptr workspace, AttentionBwdSm90Params& params);

class AttentionBackwardKernel {
 public:
  // `module` holds the kernels of attention_backward_kernel_expressions, main first.
  AttentionBackwardKernel(const AttentionBackwardProblem& problem,
                          const AttentionBackwardConfig& config, const LoadedModule& module);

  // Enqueues preprocess, main and convert on `stream`; `workspace` holds at least
  // attention_backward_workspace(problem).bytes. Returns the first failing driver result.
  CUresult launch(const AttentionBackwardTensors& tensors, CUdeviceptr workspace,
                  CUstream stream) const;
  // Whether this kernel can address `tensors`: always for fa2; for fa3, whether TMA can map Q,
  // K, V, dO, dK and dV (launch would throw otherwise).
  bool serves(const AttentionBackwardTensors& tensors) const;

  const AttentionBackwardProblem& problem() const { return problem_; }
  const AttentionBackwardConfig& config() const { return config_; }

 private:
  AttentionBackwardProblem problem_;
  AttentionBackwardConfig config_;
  AttentionBackwardLaunch plan_;
  CUfunction main_ = nullptr;
  CUfunction preprocess_ = nullptr;
  CUfunction convert_ = nullptr;
};

}  // namespace kt::rt
