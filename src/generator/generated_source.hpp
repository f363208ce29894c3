// (Problem, Config) -> GeneratedSource: a tiny instantiation stub over the embedded templates,
// the name expressions of its kernels, and the NVRTC options. Pure text: no NVRTC, no driver.
#pragma once

#include <string>
#include <vector>

#include "core/op_spec.hpp"

namespace kt::gen {

// Bumped whenever generated code changes meaning without a template file changing (it is part
// of every compile key).
inline constexpr int kCodegenVersion = 1;

struct GeneratedSource {
  std::string name;                           // program name for logs, e.g. the config key
  std::string code;                           // the stub NVRTC compiles
  std::vector<std::string> name_expressions;  // kernels to instantiate, main kernel first
  std::string arch;                           // "sm_90a", "sm_80", ...
  std::vector<std::string> options;           // complete NVRTC option list
};

// The stub that instantiates `kernels` for `arch`: one #include per header, the name
// expressions, the NVRTC options. Every op's kernels are generated through this.
GeneratedSource generate(const KernelSource& kernels, const std::string& arch);

// The kernels of (problem, config) of the op `problem_key` belongs to (OpSpec::kernel_source).
GeneratedSource generate(const OpSpec& op, std::string_view problem_key,
                         std::string_view config_key, std::string_view variant,
                         const std::string& arch);

// Hex SHA-256 over everything the compile key covers (nvrtc_compiler.hpp) but the NVRTC
// version: the codegen version, arch, code, name expressions, options and every embedded
// template. Two cubins of one source key differ only in the NVRTC that built them, so either
// serves; the runtime finds a stored cubin by it without loading NVRTC. Pure text.
std::string source_key(const GeneratedSource& source);
// The digest of every embedded template that source_key folds in, computed once per process (a
// runtime takes it at open, so that its first dispatch does not pay for it).
const std::string& embedded_templates_sha256();

// The measuring protocol's L2 flush (templates/common/l2_flush.cuh): kt::l2_flush_read.
GeneratedSource generate_l2_flush(const std::string& arch);

}  // namespace kt::gen
