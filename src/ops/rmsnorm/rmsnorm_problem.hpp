// The fused RMSNorm problem: y = x · rsqrt(mean(x²) + eps) · w over each row of `hidden`
// elements, with an optional residual add first (x = x + r, the sum also written). What to
// compute, never how (RmsnormConfig). eps is a call argument, not part of the problem.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/types.hpp"

namespace kt {

struct RmsnormProblem {
  std::int64_t rows = 1;
  std::int64_t hidden = 1;
  DType dtype = DType::kBF16;  // x, w, r, y and the written sum
  bool residual = false;

  // x read, w read once, y written; with the residual add also r read and the sum written.
  double min_bytes() const;
  // Per element: the square-accumulate (2), the scale and the weight (2); the add (1).
  double flops() const;

  bool operator==(const RmsnormProblem&) const = default;
};

// Throws kt::Error (invalid argument) naming the field: rows or hidden < 1, hidden over 65536,
// rows x hidden past 2^40 elements, a dtype other than bf16 or fp16.
void validate(const RmsnormProblem& problem);

// Canonical key, e.g. "rmsnorm:bf16:r8192.h4096" (".res" appended with the residual add).
std::string to_key(const RmsnormProblem& problem);
// Throws kt::Error (invalid argument) naming what is malformed.
RmsnormProblem parse_rmsnorm_key(std::string_view key);

// Parses "rows=8192,hidden=4096" into `problem` (both required). Throws naming the bad field:
// unknown, given twice, missing, not a whole decimal integer, out of range.
void parse_rmsnorm_shape(std::string_view shape, RmsnormProblem& problem);

// Device pointers of one RMSNorm call. Rows are dense (row i starts i · hidden elements in) and
// every pointer is 16-byte aligned (the kernels move 16-byte vectors).
struct RmsnormTensors {
  const void* x = nullptr;         // rows x hidden
  const void* weight = nullptr;    // hidden
  void* y = nullptr;               // rows x hidden
  const void* residual = nullptr;  // rows x hidden; required exactly when problem.residual
  void* residual_out = nullptr;    // receives x + residual (may equal residual: in place)
  float eps = 1e-6f;
};

}  // namespace kt
