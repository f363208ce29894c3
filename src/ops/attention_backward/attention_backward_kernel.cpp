// Launching the attention backward's three kernels through the driver.
#include "ops/attention_backward/attention_backward_kernel.hpp"

#include <fmt/format.h>

#include <cstddef>

#include "common/work_order.h"
#include "core/error.hpp"
#include "ops/attention/attention_param_fields.hpp"
#include "ops/attention/attention_tensor_map.hpp"
#include "ops/attention_backward/kernels/attention_bwd_sm90_layout.h"
#include "runtime/kernel_launch.hpp"
#include "runtime/tensor_map.hpp"

namespace kt::rt {

static_assert(sizeof(AttentionBwdParams) == 13 * 8 + 24 * 8 + 8 * 4,
              "AttentionBwdParams layout changed");
static_assert(offsetof(AttentionBwdParams, q_stride) == 13 * 8 &&
                  offsetof(AttentionBwdParams, batch) == 37 * 8 &&
                  offsetof(AttentionBwdParams, softmax_scale) == 37 * 8 + 5 * 4,
              "AttentionBwdParams layout changed");
static_assert(offsetof(AttentionBwdSm90Params, bwd) == 9 * 128 &&
                  sizeof(AttentionBwdSm90Params) == 12 * 128,
              "AttentionBwdSm90Params layout changed");

namespace {

// fa3 boxes (attention_bwd_params.h): dK and dV by one consumer warpgroup's keys; the FP32 dQ
// accumulator by 32 columns (one 128-byte swizzle row) and one m64 tile's rows.
constexpr std::uint32_t kFa3KeyBoxRows = 64;
constexpr std::uint32_t kFa3DqBoxColumns = 32;

// One kernel of the three, its parameter block the only argument.
CUresult launch_plan(CUfunction f, const LaunchPlan& plan, void* params, CUstream stream) {
  void* args[] = {params};
  return launch_with_plan(f, plan, args, stream);
}

}  // namespace

AttentionBwdParams make_attention_backward_params(const AttentionBackwardProblem& problem,
                                                  const AttentionBackwardTensors& t,
                                                  CUdeviceptr workspace) {
  AttentionBwdParams p{};
  set_forward_operands(p, t);
  p.dout = t.dout;
  p.dq = t.dq;
  p.dk = t.dk;
  p.dv = t.dv;
  const AttentionBackwardWorkspace w = attention_backward_workspace(problem);
  char* base = reinterpret_cast<char*>(workspace);
  p.dq_accum = reinterpret_cast<float*>(base + w.dq_accum_offset);
  p.d_rows = reinterpret_cast<float*>(base + w.d_rows_offset);
  p.lse_log2 = reinterpret_cast<float*>(base + w.lse_log2_offset);
  p.dq_semaphores =
      problem.deterministic ? reinterpret_cast<unsigned int*>(base + w.semaphores_offset) : nullptr;
  set_strides(t.dout_strides, p.dout_stride);
  set_strides(t.dq_strides, p.dq_stride);
  set_strides(t.dk_strides, p.dk_stride);
  set_strides(t.dv_strides, p.dv_stride);
  set_sizes_and_scale(p, problem, t.softmax_scale);
  // What the key blocks of a key/value head share: its query heads' Q and dO.
  p.causal_section = section_entries(2 * problem.seqlen_q * problem.head_dim *
                                     std::int64_t(size_bytes(problem.dtype)) *
                                     (problem.heads_q / problem.heads_kv));
  return p;
}

CUresult make_attention_backward_sm90_params(const AttentionBackwardProblem& p,
                                             const AttentionBackwardConfig& c,
                                             const AttentionBackwardTensors& t,
                                             CUdeviceptr workspace,
                                             AttentionBwdSm90Params& params) {
  // NOTE: encoded per launch (a few hundred ns of host work a map, no allocation), as the
  // forward's.
  params.bwd = make_attention_backward_params(p, t, workspace);
  const AttentionProblem f = p.forward();
  const struct {
    TmaDescriptor* map;
    const char* name;
    const void* base;
    const std::int64_t (&strides)[3];
    bool query_rows;
    std::uint32_t box_rows;
  } tensors[] = {{&params.q_map, "Q", t.q, t.q_strides, true, std::uint32_t(c.block_m)},
                 {&params.do_map, "dO", t.dout, t.dout_strides, true, std::uint32_t(c.block_m)},
                 {&params.k_map, "K", t.k, t.k_strides, false, std::uint32_t(c.block_n)},
                 {&params.v_map, "V", t.v, t.v_strides, false, std::uint32_t(c.block_n)},
                 {&params.dk_map, "dK", t.dk, t.dk_strides, false, kFa3KeyBoxRows},
                 {&params.dv_map, "dV", t.dv, t.dv_strides, false, kFa3KeyBoxRows}};
  for (const auto& x : tensors) {
    const CUresult r = encode_attention_map(*x.map, x.name, f, x.base, x.strides,
                                            x.query_rows ? p.seqlen_q : p.seqlen_k,
                                            x.query_rows ? p.heads_q : p.heads_kv, x.box_rows);
    if (r != CUDA_SUCCESS) return r;
  }
  // The workspace's FP32 arrays (256-byte aligned): the dQ accumulator as the dense 4D tensor
  // {head_dim, seqlen_q, heads_q, batch}, 128B-swizzled boxes of {32, 64} (of {32, block_m} where
  // dQ is staged transposed); lse_log2 and D as rows.
  const std::uint64_t d = std::uint64_t(p.head_dim);
  const std::uint64_t dq_dims[4] = {d, std::uint64_t(p.seqlen_q), std::uint64_t(p.heads_q),
                                    std::uint64_t(p.batch)};
  const std::uint64_t dq_strides[3] = {d * 4, std::uint64_t(p.seqlen_q) * d * 4,
                                       std::uint64_t(p.heads_q * p.seqlen_q) * d * 4};
  const std::uint32_t dq_box[4] = {kFa3DqBoxColumns,
                                   std::uint32_t(attn_bwd::fa3_dq_box_rows(c.block_m)), 1, 1};
  CUresult r = encode_tensor_map(params.dq_accum_map, DType::kFP32, params.bwd.dq_accum, dq_dims,
                                 dq_strides, dq_box);
  const std::uint64_t rows[1] = {std::uint64_t(p.batch * p.heads_q * p.seqlen_q)};
  // A box of the block's rows and the kStatsLead before them (the layout's stats_box): the kernel
  // starts it on a 16-byte aligned element, as TMA needs.
  const AttentionBwdSm90Layout layout(int(p.head_dim), c.block_m, c.block_n, c.stages);
  const std::uint32_t row_box[1] = {std::uint32_t(layout.stats_box)};
  if (r == CUDA_SUCCESS)
    r = encode_tensor_map(params.lse_log2_map, DType::kFP32, params.bwd.lse_log2, rows, {}, row_box,
                          TmaSwizzle::kNone);
  if (r == CUDA_SUCCESS)
    r = encode_tensor_map(params.d_rows_map, DType::kFP32, params.bwd.d_rows, rows, {}, row_box,
                          TmaSwizzle::kNone);
  return r;
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
  allow_dynamic_smem(main_, plan_.main.smem_bytes);
}

CUresult AttentionBackwardKernel::launch(const AttentionBackwardTensors& tensors,
                                         CUdeviceptr workspace, CUstream stream) const {
  if (config_.family == AttentionFamily::kSm90) {
    AttentionBwdSm90Params params;
    CUresult r = make_attention_backward_sm90_params(problem_, config_, tensors, workspace, params);
    if (r == CUDA_SUCCESS) r = launch_plan(preprocess_, plan_.preprocess, &params.bwd, stream);
    if (r == CUDA_SUCCESS) r = launch_plan(main_, plan_.main, &params, stream);
    if (r == CUDA_SUCCESS) r = launch_plan(convert_, plan_.convert, &params.bwd, stream);
    return r;
  }
  AttentionBwdParams params = make_attention_backward_params(problem_, tensors, workspace);
  CUresult r = launch_plan(preprocess_, plan_.preprocess, &params, stream);
  if (r == CUDA_SUCCESS) r = launch_plan(main_, plan_.main, &params, stream);
  if (r == CUDA_SUCCESS) r = launch_plan(convert_, plan_.convert, &params, stream);
  return r;
}

bool AttentionBackwardKernel::serves(const AttentionBackwardTensors& t) const {
  if (config_.family != AttentionFamily::kSm90) return true;
  const AttentionProblem f = problem_.forward();
  for (const auto& [base, strides] :
       {std::pair{t.q, &t.q_strides}, std::pair{t.k, &t.k_strides}, std::pair{t.v, &t.v_strides},
        std::pair{t.dout, &t.dout_strides},
        std::pair{static_cast<const void*>(t.dk), &t.dk_strides},
        std::pair{static_cast<const void*>(t.dv), &t.dv_strides}})
    if (attention_map_error(f, base, *strides)) return false;
  return true;
}

}  // namespace kt::rt
