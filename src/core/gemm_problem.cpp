// GemmProblem: validation, keys and shape parsing.
#include "core/gemm_problem.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kt {

double GemmProblem::min_bytes() const {
  const double in = size_bytes(in_dtype), out = size_bytes(out_dtype);
  return in * (double(m) * double(k) + double(k) * double(n)) + out * double(m) * double(n);
}

bool GemmProblem::a_vector_aligned() const { return k % 8 == 0; }

bool GemmProblem::b_vector_aligned() const { return (layout == Layout::kNT ? k : n) % 8 == 0; }

int GemmProblem::b_row_copy_bytes() const {
  if (layout != Layout::kNN || b_vector_aligned()) return 0;
  return n % 4 == 0 ? 8 : n % 2 == 0 ? 4 : 0;
}

void validate(const GemmProblem& p) {
  constexpr std::int64_t kMaxElems = std::numeric_limits<std::int32_t>::max();
  const struct {
    const char* name;
    std::int64_t value;
  } dims[] = {{"M", p.m}, {"N", p.n}, {"K", p.k}};
  for (const auto& d : dims) {
    if (d.value < 1)
      throw_invalid(fmt::format("GEMM {} = {}: every dimension must be >= 1", d.name, d.value));
    if (d.value > kMaxElems)
      throw_invalid(fmt::format("GEMM {} = {} exceeds 2^31-1", d.name, d.value));
  }
  const struct {
    const char* name;
    std::int64_t rows, cols;
  } ops[] = {{"A (MxK)", p.m, p.k}, {"B", p.k, p.n}, {"C (MxN)", p.m, p.n}};
  for (const auto& o : ops) {
    if (o.rows > kMaxElems / o.cols)
      throw_invalid(fmt::format("GEMM operand {} has {}x{} elements, more than 2^31-1", o.name,
                                o.rows, o.cols));
  }
  if (!is_16bit(p.in_dtype))
    throw_invalid("GEMM inputs must be bf16 or fp16 (fp32 is an output dtype only)");
}

std::string to_key(const GemmProblem& p) {
  return fmt::format("gemm:{}:{}:{}:{}x{}x{}", to_string(p.in_dtype), to_string(p.out_dtype),
                     to_string(p.layout), p.m, p.n, p.k);
}

GemmProblem parse_gemm_key(std::string_view key) {
  const std::vector<std::string_view> parts = split(key, ':');
  if (parts.size() != 5 || parts[0] != "gemm")
    throw_invalid(fmt::format("'{}' is not a GEMM problem key (gemm:IN:OUT:LAYOUT:MxNxK)", key));
  GemmProblem p;
  p.in_dtype = parse_dtype(parts[1]);
  p.out_dtype = parse_dtype(parts[2]);
  p.layout = parse_layout(parts[3]);
  parse_gemm_shape(parts[4], p);
  if (to_key(p) != key)
    throw_invalid(fmt::format("GEMM key '{}' is not canonical: write it as '{}'", key, to_key(p)));
  return p;
}

void parse_gemm_shape(std::string_view shape, GemmProblem& p) {
  const std::vector<std::string_view> dims = split(shape, 'x');
  if (dims.size() != 3)
    throw_invalid(fmt::format("GEMM shape '{}' must be MxNxK, e.g. 4096x4096x4096", shape));
  const char* names[] = {"M", "N", "K"};
  std::int64_t values[3];
  for (int i = 0; i < 3; ++i)
    values[i] = parse_int(dims[i], fmt::format("GEMM {} in '{}'", names[i], shape));
  p.m = values[0];
  p.n = values[1];
  p.k = values[2];
  validate(p);
}

}  // namespace kt
