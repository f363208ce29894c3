// Launching an attention-forward kernel through the driver.
#include "ops/attention/attention_kernel.hpp"

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/attention_order.hpp"
#include "core/error.hpp"
#include "ops/attention/attention_param_fields.hpp"
#include "ops/attention/attention_tensor_map.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/kernel_launch.hpp"

namespace kt::rt {

static_assert(sizeof(AttentionParams) == 9 * 8 + 12 * 8 + 10 * 4, "AttentionParams layout changed");
static_assert(offsetof(AttentionSm90Params, attn) == 4 * 128 &&
                  sizeof(AttentionSm90Params) == 6 * 128,
              "AttentionSm90Params layout changed");

namespace {

// fa3 boxes of Q and O: one consumer warpgroup's 64 rows.
constexpr std::uint32_t kFa3QueryBoxRows = 64;

}  // namespace

AttentionKernel::AttentionKernel(const AttentionProblem& problem, const AttentionConfig& config,
                                 const LoadedModule& module)
    : problem_(problem),
      kernel_problem_(kernel_problem(problem, config)),
      config_(config),
      plan_(plan_launch(problem, config)),
      combine_plan_(plan_split_combine(problem, config)) {
  const std::size_t kernels = config.splits > 1 ? 2 : 1;
  if (module.functions.size() < kernels)
    throw Error(ErrorKind::kInternal,
                fmt::format("module for {} has {} kernel(s), needs {}", to_key(config),
                            module.functions.size(), kernels));
  function_ = module.functions[0];
  if (config.splits > 1) combine_ = module.functions[1];
  allow_dynamic_smem(function_, plan_.smem_bytes);
  // A persistent grid holds the CTAs the device runs at once (the occupancy query counts the
  // dynamic shared memory allowed above).
  if (config.persistent)
    plan_ = plan_launch(problem, config,
                        resident_ctas(function_, int(plan_.num_threads()), int(plan_.smem_bytes)));
  causal_section_ = config.persistent
                        ? persistent_causal_section(kernel_problem_, config, plan_.grid[0])
                        : attention_causal_section(kernel_problem_);
}

AttentionTensors AttentionKernel::kernel_tensors(const AttentionTensors& t) const {
  if (!config_.pack_gqa) return t;
  AttentionTensors k = t;
  const std::int64_t group = problem_.heads_q / problem_.heads_kv;
  for (std::int64_t* strides : {k.q_strides, k.o_strides}) {
    strides[1] = strides[2];
    strides[2] *= group;
  }
  return k;
}

AttentionParams AttentionKernel::make_params(const AttentionTensors& t) const {
  AttentionParams p = make_attention_params(kernel_problem_, kernel_tensors(t));
  p.causal_section = causal_section_;
  return p;
}

AttentionParams make_attention_params(const AttentionProblem& problem, const AttentionTensors& t) {
  AttentionParams p{};
  set_forward_operands(p, t);
  set_sizes_and_scale(p, problem, t.softmax_scale);
  p.num_splits = 1;
  p.causal_section = attention_causal_section(problem);
  if (problem.varlen) {
    // Packed: each sequence is addressed from its first row; there is no batch dimension.
    p.cu_seqlens_q = t.cu_seqlens_q;
    p.cu_seqlens_k = t.cu_seqlens_k;
    p.total_q = int(t.total_q);
    p.q_stride.batch = p.k_stride.batch = p.v_stride.batch = p.o_stride.batch = 0;
  }
  return p;
}

CUresult AttentionKernel::make_sm90_params(const AttentionTensors& t,
                                           AttentionSm90Params& params) const {
  // NOTE: encoded per launch (a few hundred ns of host work, no allocation), as for the GEMM.
  const AttentionProblem& p = kernel_problem_;
  const std::uint32_t kv_rows = std::uint32_t(config_.block_n);
  params.attn = make_params(t);
  const AttentionTensors mapped = map_tensors(t);
  const std::int64_t rows_q = p.varlen ? t.total_q : p.seqlen_q;
  const std::int64_t rows_k = p.varlen ? t.total_k : p.seqlen_k;
  CUresult r = encode_attention_map(params.q_map, "Q", p, mapped.q, mapped.q_strides, rows_q,
                                    p.heads_q, kFa3QueryBoxRows);
  if (r == CUDA_SUCCESS)
    r = encode_attention_map(params.k_map, "K", p, mapped.k, mapped.k_strides, rows_k, p.heads_kv,
                             kv_rows);
  if (r == CUDA_SUCCESS)
    r = encode_attention_map(params.v_map, "V", p, mapped.v, mapped.v_strides, rows_k, p.heads_kv,
                             kv_rows);
  if (r == CUDA_SUCCESS)
    r = encode_attention_map(params.o_map, "O", p, mapped.o, mapped.o_strides, rows_q, p.heads_q,
                             kFa3QueryBoxRows);
  return r;
}

AttentionTensors AttentionKernel::map_tensors(const AttentionTensors& t) const {
  AttentionTensors k = kernel_tensors(t);
  if (!kernel_problem_.varlen) return k;
  // Packed: a map of one batch entry over all rows; its batch stride spans them (any value TMA
  // accepts would do, the coordinate is always 0).
  for (auto [strides, rows] :
       {std::pair{k.q_strides, t.total_q}, std::pair{k.k_strides, t.total_k},
        std::pair{k.v_strides, t.total_k}, std::pair{k.o_strides, t.total_q}})
    strides[0] = strides[1] * rows;
  return k;
}

bool AttentionKernel::serves(const AttentionTensors& t) const {
  if (config_.family != AttentionFamily::kSm90) return true;
  const AttentionTensors k = map_tensors(t);
  return !attention_map_error(kernel_problem_, k.q, k.q_strides) &&
         !attention_map_error(kernel_problem_, k.k, k.k_strides) &&
         !attention_map_error(kernel_problem_, k.v, k.v_strides) &&
         !attention_map_error(kernel_problem_, k.o, k.o_strides);
}

CUresult AttentionKernel::launch(const AttentionTensors& t, CUdeviceptr workspace, CUstream stream,
                                 unsigned long long* trace) const {
  if (config_.family != AttentionFamily::kSm90) {
    AttentionParams params = make_params(t);
    return launch_with(function_, plan_, &params, stream);
  }
  AttentionSm90Params params;
  CUresult r = make_sm90_params(t, params);
  if (r != CUDA_SUCCESS) return r;
  params.attn.trace = trace;
  if (config_.splits > 1) {
    if (workspace == 0)
      throw Error(ErrorKind::kInternal,
                  fmt::format("split-KV config {} launched without its {} B workspace",
                              to_key(config_), workspace_bytes()));
    params.attn.num_splits = config_.splits;
    params.attn.partials = reinterpret_cast<float*>(workspace);
  }
  r = launch_with(function_, plan_, &params, stream);
  if (r == CUDA_SUCCESS && config_.splits > 1)
    r = launch_with(combine_, combine_plan_, &params.attn, stream);
  return r;
}

CUresult AttentionKernel::launch_with(CUfunction function, const LaunchPlan& plan, void* params,
                                      CUstream stream) {
  void* args[] = {params};
  return launch_with_plan(function, plan, args, stream);
}

}  // namespace kt::rt

namespace kt {

void AttentionTensors::set_bnhd_strides(const AttentionProblem& p) {
  const std::int64_t d = p.head_dim;
  const std::int64_t q[3] = {p.seqlen_q * p.heads_q * d, p.heads_q * d, d};
  const std::int64_t kv[3] = {p.seqlen_k * p.heads_kv * d, p.heads_kv * d, d};
  for (int i = 0; i < 3; ++i) {
    q_strides[i] = o_strides[i] = q[i];
    k_strides[i] = v_strides[i] = kv[i];
  }
}

void AttentionTensors::set_bhnd_strides(const AttentionProblem& p) {
  const std::int64_t d = p.head_dim;
  const std::int64_t q[3] = {p.heads_q * p.seqlen_q * d, d, p.seqlen_q * d};
  const std::int64_t kv[3] = {p.heads_kv * p.seqlen_k * d, d, p.seqlen_k * d};
  for (int i = 0; i < 3; ++i) {
    q_strides[i] = o_strides[i] = q[i];
    k_strides[i] = v_strides[i] = kv[i];
  }
}

}  // namespace kt
