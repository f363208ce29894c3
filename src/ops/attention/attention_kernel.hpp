// An attention-forward kernel ready to launch: loaded functions (split-KV: the main kernel and its
// combine pass) and launch plans (the caller's tensors are checked by
// ops/attention/attention_call_check.hpp; fa3 also by TMA's addressing rules). launch() allocates
// nothing.
#pragma once

#include <cuda.h>

#include "attention/attention_params.h"
#include "core/attention_config.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/module_cache.hpp"

namespace kt::rt {

// The kernel parameter block for `tensors` (softmax_scale 0 becomes 1/sqrt(head_dim)), with the
// causal sections of a grid of one CTA a query block (AttentionKernel sets a persistent grid's).
AttentionParams make_attention_params(const AttentionProblem& problem,
                                      const AttentionTensors& tensors);

class AttentionKernel {
 public:
  AttentionKernel() = default;
  AttentionKernel(const AttentionProblem& problem, const AttentionConfig& config,
                  const LoadedModule& module);

  AttentionParams make_params(const AttentionTensors& t) const;
  // The fa3 parameter block: make_params plus the TMA maps of Q, K, V and O (4D {head_dim,
  // seqlen, heads, batch}, boxes of 64 columns by 64 rows for Q and O, block_n rows for K and V).
  // Throws kt::Error (invalid argument) naming the tensor when TMA cannot address it; returns
  // the driver's result of encoding.
  CUresult make_sm90_params(const AttentionTensors& t, AttentionSm90Params& params) const;
  // Whether this kernel can address `t`: always for fa2; for fa3, whether TMA can map every
  // tensor (make_sm90_params would throw otherwise).
  bool serves(const AttentionTensors& t) const;
  // Enqueues the kernel (fa3: with tensor maps encoded for `t`; no allocation either way), and
  // for split-KV its combine pass, whose partials live in `workspace` (workspace_bytes(); one
  // launch at a time, in stream order). Throws kt::Error (internal) when a split-KV kernel is
  // given no workspace. `trace`: where a kernel compiled with -DKT_TRACE stamps its phases
  // (AttentionParams::trace; `kerntune trace`), else null.
  CUresult launch(const AttentionTensors& t, CUdeviceptr workspace, CUstream stream,
                  unsigned long long* trace = nullptr) const;
  std::int64_t workspace_bytes() const { return split_workspace_bytes(problem_, config_); }

  const AttentionProblem& problem() const { return problem_; }
  const AttentionConfig& config() const { return config_; }
  const LaunchPlan& plan() const { return plan_; }

 private:
  // Enqueues `function` with one parameter block (AttentionParams, or AttentionSm90Params for
  // fa3's main kernel).
  static CUresult launch_with(CUfunction function, const LaunchPlan& plan, void* params,
                              CUstream stream);

  // The caller's tensors as the kernel addresses them (kernel_problem): with pack_gqa, Q and O with
  // the head stride as the row stride and heads_q / heads_kv heads' stride as the head stride.
  AttentionTensors kernel_tensors(const AttentionTensors& t) const;
  // kernel_tensors as fa3's TMA maps take them: a packed batch as one batch entry of all rows.
  AttentionTensors map_tensors(const AttentionTensors& t) const;

  AttentionProblem problem_;
  AttentionProblem kernel_problem_;  // kernel_problem(problem_, config_)
  AttentionConfig config_;
  LaunchPlan plan_;
  LaunchPlan combine_plan_;
  // The entries of a causal section of its tiles' order (core/attention_order.hpp; a persistent
  // grid's chosen for its grid once: persistent_causal_section).
  int causal_section_ = 1;
  CUfunction function_ = nullptr;
  CUfunction combine_ = nullptr;  // split-KV only
};

}  // namespace kt::rt
