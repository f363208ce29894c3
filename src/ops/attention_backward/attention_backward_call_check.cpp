// Attention backward's call checks (attention_backward_call_check.hpp).
#include "ops/attention_backward/attention_backward_call_check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "core/error.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

using rt::aligned;

namespace {

// The offset in elements of the last element of a tensor of `sizes` (batch, rows, heads) and
// head_dim contiguous elements, or false when it does not fit in int64.
bool last_offset(const std::int64_t (&sizes)[3], const std::int64_t* strides, std::int64_t head_dim,
                 std::int64_t* offset) {
  std::int64_t total = head_dim - 1;
  for (int i = 0; i < 3; ++i) {
    std::int64_t term = 0;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &term) ||
        __builtin_add_overflow(total, term, &total))
      return false;
  }
  *offset = total;
  return true;
}

}  // namespace

void check_attention_backward_call(const AttentionBackwardProblem& p,
                                   const AttentionBackwardTensors& t) {
  validate(p);
  const std::int64_t q_sizes[3] = {p.batch, p.seqlen_q, p.heads_q};
  const std::int64_t kv_sizes[3] = {p.batch, p.seqlen_k, p.heads_kv};
  const struct {
    const char* name;
    const void* pointer;
    const std::int64_t* strides;
    const std::int64_t (&sizes)[3];
    bool output;
  } tensors[] = {
      {"Q", t.q, t.q_strides, q_sizes, false},        {"K", t.k, t.k_strides, kv_sizes, false},
      {"V", t.v, t.v_strides, kv_sizes, false},       {"O", t.o, t.o_strides, q_sizes, false},
      {"dO", t.dout, t.dout_strides, q_sizes, false}, {"dQ", t.dq, t.dq_strides, q_sizes, true},
      {"dK", t.dk, t.dk_strides, kv_sizes, true},     {"dV", t.dv, t.dv_strides, kv_sizes, true}};
  const char* stride_names[] = {"batch", "row", "head"};
  for (const auto& x : tensors) {
    if (x.pointer == nullptr)
      throw_invalid(fmt::format("attention backward tensor {} is a null pointer", x.name));
    if (!aligned(x.pointer, 16))
      throw_invalid(
          fmt::format("attention backward tensor {} at {} is not 16-byte aligned (the kernels "
                      "move 16-byte chunks; pass aligned pointers, e.g. from cudaMalloc)",
                      x.name, x.pointer));
    for (int i = 0; i < 3; ++i) {
      if (x.strides[i] < 0 || x.strides[i] % 8 != 0)
        throw_invalid(
            fmt::format("attention backward tensor {} has {} stride {}: strides must be >= 0 "
                        "and multiples of 8 elements (head_dim must be contiguous)",
                        x.name, stride_names[i], x.strides[i]));
      if (x.output && x.strides[i] == 0 && x.sizes[i] > 1)
        throw_invalid(fmt::format(
            "attention backward output {} has {} stride 0 over {} {}s: its writes would collide",
            x.name, stride_names[i], x.sizes[i], stride_names[i]));
    }
    std::int64_t last = 0;
    if (!last_offset(x.sizes, x.strides, p.head_dim, &last))
      throw_invalid(
          fmt::format("attention backward tensor {} with strides ({}, {}, {}) spans more than "
                      "2^63 elements: the strides are wrong for its sizes",
                      x.name, x.strides[0], x.strides[1], x.strides[2]));
  }
  if (t.lse == nullptr)
    throw_invalid(
        "attention backward lse is a null pointer: pass the forward's [batch, heads_q, "
        "seqlen_q] FP32 logsumexp (its \"lse\" variant writes it)");
  if (!aligned(t.lse, 4)) throw_invalid("attention backward lse is not 4-byte aligned");
  if (!(t.softmax_scale >= 0) || std::isinf(t.softmax_scale))
    throw_invalid(
        fmt::format("attention backward softmax_scale = {} must be finite and >= 0 (0 means "
                    "1/sqrt(head_dim))",
                    t.softmax_scale));
}

}  // namespace kt
