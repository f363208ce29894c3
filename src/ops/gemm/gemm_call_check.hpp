// GEMM's checks of a caller's arguments that need no device (see gemm_launcher.cpp).
#pragma once

#include "core/gemm_problem.hpp"

namespace kt {

// Throws kt::Error (invalid argument) naming the problem field or the operand: validate(problem)
// fails; A, B or C is null; A or B is not aligned to its elements, or not to 16 bytes when the
// vectorized load path applies (problem.vector_aligned()); C is not aligned to its elements.
void check_gemm_call(const GemmProblem& problem, const void* a, const void* b, const void* c);

}  // namespace kt
