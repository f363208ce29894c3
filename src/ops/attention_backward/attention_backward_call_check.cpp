// Attention backward's call checks (attention_backward_call_check.hpp).
#include "ops/attention_backward/attention_backward_call_check.hpp"

#include "core/error.hpp"
#include "ops/attention/attention_argument_checks.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

using rt::aligned;

void check_attention_backward_call(const AttentionBackwardProblem& p,
                                   const AttentionBackwardTensors& t) {
  validate(p);
  const AttentionTensorArg tensors[] = {
      {"Q", t.q, t.q_strides, {p.batch, p.seqlen_q, p.heads_q}},
      {"K", t.k, t.k_strides, {p.batch, p.seqlen_k, p.heads_kv}},
      {"V", t.v, t.v_strides, {p.batch, p.seqlen_k, p.heads_kv}},
      {"O", t.o, t.o_strides, {p.batch, p.seqlen_q, p.heads_q}},
      {"dO", t.dout, t.dout_strides, {p.batch, p.seqlen_q, p.heads_q}},
      {"dQ", t.dq, t.dq_strides, {p.batch, p.seqlen_q, p.heads_q}, true},
      {"dK", t.dk, t.dk_strides, {p.batch, p.seqlen_k, p.heads_kv}, true},
      {"dV", t.dv, t.dv_strides, {p.batch, p.seqlen_k, p.heads_kv}, true}};
  for (const AttentionTensorArg& x : tensors)
    check_attention_tensor("attention backward", x, p.head_dim);
  if (t.lse == nullptr)
    throw_invalid(
        "attention backward lse is a null pointer: pass the forward's [batch, heads_q, "
        "seqlen_q] FP32 logsumexp (its \"lse\" variant writes it)");
  if (!aligned(t.lse, 4)) throw_invalid("attention backward lse is not 4-byte aligned");
  check_softmax_scale("attention backward", t.softmax_scale);
}

}  // namespace kt
