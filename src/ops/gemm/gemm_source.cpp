// GEMM's generated sources: the registered op's kernels and gemm_check.cuh's.
#include "ops/gemm/gemm_source.hpp"

#include <fmt/format.h>

#include "core/op_registry.hpp"

namespace kt::gen {

GeneratedSource generate_gemm(const GemmProblem& problem, const GemmConfig& config,
                              const std::string& arch) {
  return generate(op_spec("gemm"), to_key(problem), to_key(config), "", arch);
}

GeneratedSource generate_gemm_check(const GemmProblem& problem, const std::string& arch) {
  KernelSource s;
  const auto in = device_type_name(problem.in_dtype), out = device_type_name(problem.out_dtype);
  const bool nt = problem.layout == Layout::kNT;
  s.name = fmt::format("gemm_check.{}.{}.{}", to_string(problem.in_dtype),
                       to_string(problem.out_dtype), to_string(problem.layout));
  s.headers = {"kerntune/gemm/gemm_check.cuh"};
  s.name_expressions = {
      fmt::format("kt::fill_random<{}>", in),
      fmt::format("kt::fill_poison<{}>", out),
      fmt::format("kt::gemm_reference_samples<{}, {}>", in, nt ? "true" : "false"),
      fmt::format("kt::gather_and_count_nonfinite<{}>", out),
  };
  return generate(s, arch);
}

}  // namespace kt::gen
