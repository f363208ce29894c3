// NVRTC: GeneratedSource -> CompiledKernel (cubin, lowered names, log, resources). Thread-safe:
// each call owns its nvrtcProgram, so a sweep compiles candidates in parallel.
#pragma once

#include <string>
#include <vector>

#include "generator/generated_source.hpp"
#include "generator/ptxas_report.hpp"

namespace kt::gen {

struct CompiledKernel {
  std::string compile_key;
  std::string source_key;  // gen::source_key of the source
  std::string arch;
  std::string source_name;
  std::vector<std::string> name_expressions;
  std::vector<std::string> lowered_names;  // same order as name_expressions
  std::vector<char> cubin;
  std::string log;
  PtxasReport report;
  std::string nvrtc_version;
  double compile_ms = 0;

  // Resources of the i-th kernel (main kernel = 0); zeros if ptxas did not report it.
  KernelResources resources(std::size_t index = 0) const;
};

// Content key: SHA-256 over the generated code, every embedded template, the options, the
// NVRTC version, the target arch and kCodegenVersion. Never timestamps.
std::string compile_key(const GeneratedSource& source);

// Compiles with NVRTC. Throws CompileError (log, options, name) when NVRTC rejects the
// program, kt::Error (kNotFound) when NVRTC cannot be loaded.
CompiledKernel compile(const GeneratedSource& source);

// PTX of the same program (for tests and `kerntune compile --ptx`).
std::string compile_to_ptx(const GeneratedSource& source);

}  // namespace kt::gen
