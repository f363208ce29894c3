// Attention forward's checks of a caller's arguments that need no device (see
// attention_launcher.cpp).
#pragma once

#include "core/attention_problem.hpp"
#include "kerntune/kerntune.hpp"

namespace kt {

// Throws kt::Error (invalid argument) naming the problem field or the tensor: validate(problem)
// fails; Q, K, V or O is null or not 16-byte aligned (the kernel loads 16-byte chunks); a stride
// is negative or not a multiple of 8 elements; a tensor's last element lies beyond 2^63 - 1
// elements; lse is not 4-byte aligned; softmax_scale is negative, infinite or NaN.
void check_attention_call(const AttentionProblem& problem, const AttentionTensors& tensors);

}  // namespace kt
