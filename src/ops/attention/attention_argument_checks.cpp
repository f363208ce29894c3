// The checks of attention call arguments shared by both ops (attention_argument_checks.hpp).
#include "ops/attention/attention_argument_checks.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

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

void check_attention_tensor(std::string_view op, const AttentionTensorArg& x,
                            std::int64_t head_dim) {
  const char* stride_names[] = {"batch", "row", "head"};
  const char* index_names[] = {"batches", "rows", "heads"};
  if (x.pointer == nullptr)
    throw_invalid(fmt::format("{} tensor {} is a null pointer", op, x.name));
  if (!rt::aligned(x.pointer, 16))
    throw_invalid(
        fmt::format("{} tensor {} at {} is not 16-byte aligned (the kernel loads 16-byte chunks; "
                    "pass aligned pointers, e.g. from cudaMalloc)",
                    op, x.name, x.pointer));
  for (int i = 0; i < 3; ++i) {
    if (x.strides[i] < 0 || x.strides[i] % 8 != 0)
      throw_invalid(
          fmt::format("{} tensor {} has {} stride {}: strides must be >= 0 and multiples of 8 "
                      "elements (head_dim must be contiguous)",
                      op, x.name, stride_names[i], x.strides[i]));
    if (x.check_collisions && x.strides[i] == 0 && x.sizes[i] > 1)
      throw_invalid(fmt::format("{} output {} has {} stride 0 over {} {}: its writes would collide",
                                op, x.name, stride_names[i], x.sizes[i], index_names[i]));
  }
  std::int64_t last = 0;
  if (!last_offset(x.sizes, x.strides, head_dim, &last))
    throw_invalid(fmt::format(
        "{} tensor {} with strides ({}, {}, {}) spans more than 2^63 elements: the strides are "
        "wrong for its sizes",
        op, x.name, x.strides[0], x.strides[1], x.strides[2]));
}

void check_softmax_scale(std::string_view op, float softmax_scale) {
  if (!(softmax_scale >= 0) || std::isinf(softmax_scale))
    throw_invalid(
        fmt::format("{} softmax_scale = {} must be finite and >= 0 (0 means 1/sqrt(head_dim))", op,
                    softmax_scale));
}

}  // namespace kt
