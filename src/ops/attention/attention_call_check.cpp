// Attention forward's call checks that need no device: the problem, null or misaligned
// tensors, strides and the scale. Run by the launcher's check_call before any lookup, compile or
// driver call.
#include "ops/attention/attention_call_check.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "core/error.hpp"
#include "ops/attention/attention_argument_checks.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

using rt::aligned;

namespace {

// A packed batch's own arguments: its offsets, and totals its bucket can hold.
void check_varlen_call(const AttentionProblem& p, const AttentionTensors& t) {
  if (t.cu_seqlens_q == nullptr || t.cu_seqlens_k == nullptr)
    throw_invalid(
        "attention varlen call without cu_seqlens_q / cu_seqlens_k (device int32 arrays of "
        "batch + 1 row offsets)");
  if (!aligned(t.cu_seqlens_q, 4) || !aligned(t.cu_seqlens_k, 4))
    throw_invalid("attention cu_seqlens arrays are not 4-byte aligned (int32)");
  const struct {
    const char* name;
    std::int64_t total, longest, bound;
  } totals[] = {{"total_q", t.total_q, p.seqlen_q, p.total_q},
                {"total_k", t.total_k, p.seqlen_k, p.total_k}};
  for (const auto& x : totals)
    if (x.total < p.batch || x.total > x.bound)
      throw_invalid(fmt::format(
          "attention varlen {} = {}: {} sequences of at most {} rows hold {} to {} (the problem "
          "allows {})",
          x.name, x.total, p.batch, x.longest, p.batch, p.batch * x.longest, x.bound));
}

}  // namespace

void check_attention_call(const AttentionProblem& p, const AttentionTensors& t) {
  validate(p);
  AttentionTensorArg tensors[] = {{"Q", t.q, t.q_strides, {p.batch, p.seqlen_q, p.heads_q}},
                                  {"K", t.k, t.k_strides, {p.batch, p.seqlen_k, p.heads_kv}},
                                  {"V", t.v, t.v_strides, {p.batch, p.seqlen_k, p.heads_kv}},
                                  {"O", t.o, t.o_strides, {p.batch, p.seqlen_q, p.heads_q}, true}};
  if (p.varlen) {
    check_varlen_call(p, t);
    for (auto& x : tensors) {
      const bool keys = x.name[0] == 'K' || x.name[0] == 'V';
      x.sizes[0] = 1;  // packed: the batch strides are unused
      x.sizes[1] = keys ? t.total_k : t.total_q;
    }
  } else if (t.cu_seqlens_q != nullptr || t.cu_seqlens_k != nullptr) {
    throw_invalid(
        "attention tensors carry cu_seqlens but the problem is not varlen: call "
        "attention_varlen (or set problem.varlen and its totals)");
  }
  for (const AttentionTensorArg& x : tensors) check_attention_tensor("attention", x, p.head_dim);
  if (t.lse != nullptr && !aligned(t.lse, 4))
    throw_invalid("attention lse buffer is not 4-byte aligned");
  check_softmax_scale("attention", t.softmax_scale);
}

}  // namespace kt
