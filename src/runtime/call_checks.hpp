// The checks of a caller's arguments that need no device: the problem, null pointers, the
// alignment the kernels' load paths need, and strides. Runtime and the C ABI run them before any
// lookup, compile or driver call, so a bad call costs nothing and never reaches the GPU.
#pragma once

#include "core/attention_problem.hpp"
#include "core/gemm_problem.hpp"
#include "kerntune/kerntune.hpp"

namespace kt::rt {

// Throws kt::Error (invalid argument) naming the problem field or the operand: validate(problem)
// fails; A, B or C is null; A or B is not aligned to its elements, or not to 16 bytes when the
// vectorized load path applies (problem.vector_aligned()); C is not aligned to its elements.
void check_gemm_call(const GemmProblem& problem, const void* a, const void* b, const void* c);

// Throws kt::Error (invalid argument) naming the problem field or the tensor: validate(problem)
// fails; Q, K, V or O is null or not 16-byte aligned (the kernel loads 16-byte chunks); a stride
// is negative or not a multiple of 8 elements; a tensor's last element lies beyond 2^63 - 1
// elements; lse is not 4-byte aligned; softmax_scale is negative, infinite or NaN.
void check_attention_call(const AttentionProblem& problem, const AttentionTensors& tensors);

}  // namespace kt::rt
