// GEMM's call checks that need no device: the problem, null operands and the alignment its
// load paths need. Run by the launcher's check_call before any lookup, compile or driver call.
#include "ops/gemm/gemm_call_check.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

using rt::aligned;

void check_gemm_call(const GemmProblem& problem, const void* a, const void* b, const void* c) {
  validate(problem);
  const struct {
    const char* name;
    const void* pointer;
  } operands[] = {{"A", a}, {"B", b}, {"C", c}};
  for (const auto& o : operands)
    if (o.pointer == nullptr)
      throw_invalid(fmt::format("GEMM operand {} is a null pointer", o.name));
  const int in_bytes = size_bytes(problem.in_dtype);
  const bool vector[] = {problem.a_vector_aligned(), problem.b_vector_aligned()};
  for (int i = 0; i < 2; ++i) {
    if (!aligned(operands[i].pointer, in_bytes))
      throw_invalid(fmt::format("GEMM operand {} at {} is not aligned to its {}-byte elements",
                                operands[i].name, operands[i].pointer, in_bytes));
    if (vector[i] && !aligned(operands[i].pointer, 16))
      throw_invalid(fmt::format(
          "GEMM operand {} at {} is not 16-byte aligned; the vectorized path chosen for its "
          "16-byte aligned rows ({}) needs a 16-byte aligned base (pass aligned pointers, e.g. "
          "from cudaMalloc)",
          operands[i].name, operands[i].pointer,
          i == 0 || problem.layout == Layout::kNT ? "K % 8 == 0" : "N % 8 == 0"));
  }
  // nn's B of even N % 8 != 0: the sm90 family copies its rows a whole 4 or 8 bytes at a time,
  // which needs its base aligned as its rows are.
  if (const int row_alignment = problem.b_row_copy_bytes();
      row_alignment > 0 && !aligned(b, row_alignment))
    throw_invalid(fmt::format(
        "GEMM operand B at {} is not {}-byte aligned; its rows of N = {} elements are, and the "
        "sm90 family copies them {} bytes at a time (pass an aligned pointer, e.g. from "
        "cudaMalloc)",
        b, row_alignment, problem.n, row_alignment));
  const int out_bytes = size_bytes(problem.out_dtype);
  if (!aligned(c, out_bytes))
    throw_invalid(
        fmt::format("GEMM operand C at {} is not aligned to its {}-byte elements", c, out_bytes));
}

}  // namespace kt
