// The GEMM problem: C[M,N] = A[M,K] · B, with B either K×N (nn) or N×K (nt), row-major
// everywhere, FP32 accumulation. A problem says what to compute, never how (that is GemmConfig).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/types.hpp"

namespace kt {

struct GemmProblem {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType in_dtype = DType::kBF16;   // A and B
  DType out_dtype = DType::kBF16;  // C
  Layout layout = Layout::kNT;

  // Leading dimensions are dense: lda = K, ldb = N (nn) or K (nt), ldc = N.
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // The fewest bytes any kernel must move: each operand read once, C written once.
  double min_bytes() const;
  // True when every row of A (K % 8 == 0), of B (K % 8 == 0 for nt, N % 8 == 0 for nn), or of
  // both starts 16-byte aligned for dense operands, so the vectorized load paths apply to it
  // (TMA and the sm90 and small-M families need both). Such an operand's pointer must then be
  // 16-byte aligned too; the runtime checks that before launch.
  bool a_vector_aligned() const;
  bool b_vector_aligned() const;
  bool vector_aligned() const { return a_vector_aligned() && b_vector_aligned(); }
  // nn's B whose rows are not 16-byte aligned but N is even: the bytes its rows are aligned to
  // (8 for N % 4 == 0, else 4), which the sm90 family copies them in (sm90_mn_copy_bytes) and the
  // runtime asks of its pointer; 0 for any other B.
  int b_row_copy_bytes() const;

  bool operator==(const GemmProblem&) const = default;
};

// Device pointers of one GEMM call (dense, row-major; see GemmProblem).
struct GemmCall {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
};

// Throws kt::Error (invalid argument) naming the field when a dimension is < 1, too large for
// 32-bit indexing of one operand, or the input dtype is fp32.
void validate(const GemmProblem& problem);

// Canonical key, e.g. "gemm:bf16:bf16:nt:4096x4096x4096" (op:in:out:layout:MxNxK).
// parse_gemm_key is its exact inverse: it refuses a non-canonical spelling (e.g. "064").
std::string to_key(const GemmProblem& problem);
GemmProblem parse_gemm_key(std::string_view key);

// Parses "MxNxK" (e.g. "4096x4096x4096") into problem.m/n/k; the error names what is wrong.
void parse_gemm_shape(std::string_view shape, GemmProblem& problem);

}  // namespace kt
