// The checks of attention call arguments that need no device, shared by the forward's and the
// backward's call checks: a tensor's pointer, strides and the reach of its last element; the
// softmax scale.
#pragma once

#include <cstdint>
#include <string_view>

namespace kt {

// One tensor of a call, addressed as base + b · batch_stride + i · row_stride + h · head_stride
// + d with head_dim contiguous elements.
struct AttentionTensorArg {
  const char* name = "";  // as the caller knows it: "Q", "dO", ...
  const void* pointer = nullptr;
  const std::int64_t* strides = nullptr;  // batch, row, head, in elements
  std::int64_t sizes[3]{};                // batch, rows, heads
  bool check_collisions = false;          // refuse a stride 0 over more than one index
};

// Throws kt::Error (invalid argument) naming `op` ("attention", "attention backward") and the
// tensor when its pointer is null or not 16-byte aligned (the kernels load 16-byte chunks), a
// stride is negative or not a multiple of 8 elements, with check_collisions a stride is 0 over
// more than one index (the writes would collide), or its last element lies beyond 2^63 - 1
// elements.
void check_attention_tensor(std::string_view op, const AttentionTensorArg& tensor,
                            std::int64_t head_dim);

// Throws kt::Error (invalid argument) naming `op` when `softmax_scale` is negative, infinite or
// NaN (0 stands for 1 / sqrt(head_dim)).
void check_softmax_scale(std::string_view op, float softmax_scale);

}  // namespace kt
