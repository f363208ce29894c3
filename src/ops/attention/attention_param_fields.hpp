// The fields that the attention forward's and backward's parameter blocks (attention_params.h,
// attention_bwd_params.h) fill alike: a tensor's {batch, row, head} strides, the forward's
// operands, the sizes, and the softmax scale with its base-2 form.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/tensor_strides.h"

namespace kt::rt {

// Copies element strides {batch, row, head} into a parameter block's TensorStrides.
inline void set_strides(const std::int64_t (&from)[3], TensorStrides& to) {
  to.batch = from[0];
  to.row = from[1];
  to.head = from[2];
}

// Copies the forward's operands from `tensors` (AttentionTensors, or AttentionBackwardTensors,
// whose Q, K, V, O and lse are the forward's) into `params`: the pointers q, k, v, o and lse and
// the {batch, row, head} strides of Q, K, V and O.
template <typename Params, typename Tensors>
void set_forward_operands(Params& params, const Tensors& tensors) {
  params.q = tensors.q;
  params.k = tensors.k;
  params.v = tensors.v;
  params.o = tensors.o;
  params.lse = tensors.lse;
  set_strides(tensors.q_strides, params.q_stride);
  set_strides(tensors.k_strides, params.k_stride);
  set_strides(tensors.v_strides, params.v_stride);
  set_strides(tensors.o_strides, params.o_stride);
}

// Sets `params`' batch, heads_q, heads_kv, seqlen_q and seqlen_k from `problem`, its
// softmax_scale to `softmax_scale` (1 / sqrt(head_dim) when 0) and its scale_log2 to that times
// log2(e) (the kernels' exponentials are exp2).
template <typename Params, typename Problem>
void set_sizes_and_scale(Params& params, const Problem& problem, float softmax_scale) {
  constexpr double kLog2e = 1.4426950408889634;
  params.batch = int(problem.batch);
  params.heads_q = int(problem.heads_q);
  params.heads_kv = int(problem.heads_kv);
  params.seqlen_q = int(problem.seqlen_q);
  params.seqlen_k = int(problem.seqlen_k);
  params.softmax_scale =
      softmax_scale > 0 ? softmax_scale : float(1.0 / std::sqrt(double(problem.head_dim)));
  params.scale_log2 = float(double(params.softmax_scale) * kLog2e);
}

}  // namespace kt::rt
