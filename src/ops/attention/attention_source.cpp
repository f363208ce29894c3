// Attention forward's generated sources: the registered op's kernel and attention_check.cuh's.
#include "ops/attention/attention_source.hpp"

#include <fmt/format.h>

#include "core/op_registry.hpp"

namespace kt::gen {

GeneratedSource generate_attention(const AttentionProblem& problem, const AttentionConfig& config,
                                   bool write_lse, const std::string& arch) {
  return generate(op_spec("attention"), to_key(problem), to_key(config), write_lse ? "lse" : "",
                  arch);
}

GeneratedSource generate_attention_check(const AttentionProblem& problem, const std::string& arch) {
  KernelSource s;
  const auto type = device_type_name(problem.dtype);
  s.name = fmt::format("attention_check.{}", to_string(problem.dtype));
  s.headers = {"kerntune/attention/attention_check.cuh"};
  s.name_expressions = {
      fmt::format("kt::fill_random<{}>", type),
      fmt::format("kt::fill_poison<{}>", type),
      fmt::format("kt::attention_reference_rows<{}>", type),
      fmt::format("kt::gather_rows<{}>", type),
  };
  return generate(s, arch);
}

}  // namespace kt::gen
