// Launching the attention backward's three kernels through the driver.
#include "ops/attention_backward/attention_backward_kernel.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>

#include "core/error.hpp"
#include "runtime/cuda_driver.hpp"

namespace kt::rt {

static_assert(sizeof(AttentionBwdParams) == 12 * 8 + 24 * 8 + 8 * 4,
              "AttentionBwdParams layout changed");
static_assert(offsetof(AttentionBwdParams, q_batch_stride) == 12 * 8 &&
                  offsetof(AttentionBwdParams, batch) == 36 * 8 &&
                  offsetof(AttentionBwdParams, softmax_scale) == 36 * 8 + 5 * 4,
              "AttentionBwdParams layout changed");

namespace {

constexpr std::uint32_t kDefaultDynamicSmemLimit = 48 * 1024;
constexpr double kLog2e = 1.4426950408889634;

CUresult launch_plan(CUfunction f, const LaunchPlan& plan, void* params, CUstream stream) {
  void* args[] = {params};
  return driver().launch_kernel(f, plan.grid[0], plan.grid[1], plan.grid[2], plan.block[0],
                                plan.block[1], plan.block[2], plan.smem_bytes, stream, args,
                                nullptr);
}

}  // namespace

AttentionBwdParams make_attention_backward_params(const AttentionBackwardProblem& problem,
                                                  const AttentionBackwardTensors& t,
                                                  CUdeviceptr workspace) {
  AttentionBwdParams p{};
  p.q = t.q;
  p.k = t.k;
  p.v = t.v;
  p.o = t.o;
  p.dout = t.dout;
  p.lse = t.lse;
  p.dq = t.dq;
  p.dk = t.dk;
  p.dv = t.dv;
  const AttentionBackwardWorkspace w = attention_backward_workspace(problem);
  char* base = reinterpret_cast<char*>(workspace);
  p.dq_accum = reinterpret_cast<float*>(base + w.dq_accum_offset);
  p.d_rows = reinterpret_cast<float*>(base + w.d_rows_offset);
  p.dq_semaphores =
      problem.deterministic ? reinterpret_cast<unsigned int*>(base + w.semaphores_offset) : nullptr;
  // {batch, row, head} element strides into the block's named fields.
  const auto strides = [](const std::int64_t(&from)[3], long long& batch, long long& row,
                          long long& head) {
    batch = from[0];
    row = from[1];
    head = from[2];
  };
  strides(t.q_strides, p.q_batch_stride, p.q_row_stride, p.q_head_stride);
  strides(t.k_strides, p.k_batch_stride, p.k_row_stride, p.k_head_stride);
  strides(t.v_strides, p.v_batch_stride, p.v_row_stride, p.v_head_stride);
  strides(t.o_strides, p.o_batch_stride, p.o_row_stride, p.o_head_stride);
  strides(t.dout_strides, p.dout_batch_stride, p.dout_row_stride, p.dout_head_stride);
  strides(t.dq_strides, p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride);
  strides(t.dk_strides, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride);
  strides(t.dv_strides, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride);
  p.batch = int(problem.batch);
  p.heads_q = int(problem.heads_q);
  p.heads_kv = int(problem.heads_kv);
  p.seqlen_q = int(problem.seqlen_q);
  p.seqlen_k = int(problem.seqlen_k);
  p.softmax_scale =
      t.softmax_scale > 0 ? t.softmax_scale : float(1.0 / std::sqrt(double(problem.head_dim)));
  p.scale_log2 = float(double(p.softmax_scale) * kLog2e);
  return p;
}

AttentionBackwardKernel::AttentionBackwardKernel(const AttentionBackwardProblem& problem,
                                                 const AttentionBackwardConfig& config,
                                                 const LoadedModule& module)
    : problem_(problem), config_(config), plan_(plan_launch(problem, config)) {
  if (module.functions.size() != 3)
    throw Error(ErrorKind::kInternal,
                fmt::format("module for attention backward {} has {} kernels, not 3",
                            to_key(config), module.functions.size()));
  main_ = module.functions[0];
  preprocess_ = module.functions[1];
  convert_ = module.functions[2];
  if (plan_.main.smem_bytes > kDefaultDynamicSmemLimit)
    check(driver().func_set_attribute(main_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      int(plan_.main.smem_bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

CUresult AttentionBackwardKernel::launch(const AttentionBackwardTensors& tensors,
                                         CUdeviceptr workspace, CUstream stream) const {
  AttentionBwdParams params = make_attention_backward_params(problem_, tensors, workspace);
  CUresult r = launch_plan(preprocess_, plan_.preprocess, &params, stream);
  if (r == CUDA_SUCCESS) r = launch_plan(main_, plan_.main, &params, stream);
  if (r == CUDA_SUCCESS) r = launch_plan(convert_, plan_.convert, &params, stream);
  return r;
}

}  // namespace kt::rt
