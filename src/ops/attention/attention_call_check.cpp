// Attention forward's call checks that need no device: the problem, null or misaligned
// tensors, strides and the scale. Run by the launcher's check_call before any lookup, compile or
// driver call.
#include "ops/attention/attention_call_check.hpp"

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
bool last_offset(const std::int64_t (&sizes)[3], const std::int64_t (&strides)[3],
                 std::int64_t head_dim, std::int64_t* offset) {
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
  struct {
    const char* name;
    const void* pointer;
    const std::int64_t* strides;
    std::int64_t sizes[3];
  } tensors[] = {{"Q", t.q, t.q_strides, {p.batch, p.seqlen_q, p.heads_q}},
                 {"K", t.k, t.k_strides, {p.batch, p.seqlen_k, p.heads_kv}},
                 {"V", t.v, t.v_strides, {p.batch, p.seqlen_k, p.heads_kv}},
                 {"O", t.o, t.o_strides, {p.batch, p.seqlen_q, p.heads_q}}};
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
  const char* stride_names[] = {"batch", "row", "head"};
  for (const auto& x : tensors) {
    if (x.pointer == nullptr)
      throw_invalid(fmt::format("attention tensor {} is a null pointer", x.name));
    if (!aligned(x.pointer, 16))
      throw_invalid(
          fmt::format("attention tensor {} at {} is not 16-byte aligned (the kernel "
                      "loads 16-byte chunks; pass aligned pointers, e.g. from cudaMalloc)",
                      x.name, x.pointer));
    for (int i = 0; i < 3; ++i)
      if (x.strides[i] < 0 || x.strides[i] % 8 != 0)
        throw_invalid(
            fmt::format("attention tensor {} has {} stride {}: strides must be >= 0 and "
                        "multiples of 8 elements (head_dim must be contiguous)",
                        x.name, stride_names[i], x.strides[i]));
    std::int64_t last = 0;
    const std::int64_t strides[3] = {x.strides[0], x.strides[1], x.strides[2]};
    if (!last_offset(x.sizes, strides, p.head_dim, &last))
      throw_invalid(
          fmt::format("attention tensor {} with strides ({}, {}, {}) spans more than "
                      "2^63 elements: the strides are wrong for its sizes",
                      x.name, strides[0], strides[1], strides[2]));
  }
  if (t.lse != nullptr && !aligned(t.lse, 4))
    throw_invalid("attention lse buffer is not 4-byte aligned");
  if (!(t.softmax_scale >= 0) || std::isinf(t.softmax_scale))
    throw_invalid(
        fmt::format("attention softmax_scale = {} must be finite and >= 0 (0 means "
                    "1/sqrt(head_dim))",
                    t.softmax_scale));
}

}  // namespace kt
