// (Problem, Config) -> GeneratedSource: a tiny instantiation stub over the embedded templates,
// the name expressions of its kernels, and the NVRTC options. Pure text: no NVRTC, no driver.
#pragma once

#include <string>
#include <vector>

#include "core/attention_config.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
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

// The GEMM kernel of the config's family (and, with split-K, the reduce kernel) for `arch`; an
// sm90 config needs arch sm_90a. The registered gemm op's generate(): the same source, so the
// same compile key, as the runtime and the tuner make.
GeneratedSource generate_gemm(const GemmProblem& problem, const GemmConfig& config,
                              const std::string& arch);

// The tuner's verification kernels for a problem's dtypes and layout: random fill, poison,
// sampled float64 reference and the non-finite count (templates/gemm/gemm_check.cuh).
GeneratedSource generate_gemm_check(const GemmProblem& problem, const std::string& arch);

// The attention forward kernel of the config's family (an fa3 config needs arch sm_90a);
// write_lse selects the variant that stores the row logsumexp. The registered attention op's
// generate() (variant "lse" when write_lse).
GeneratedSource generate_attention(const AttentionProblem& problem, const AttentionConfig& config,
                                   bool write_lse, const std::string& arch);

// The attention verification kernels (templates/attention/attention_check.cuh): random fill,
// poison, FP32 reference rows and the gather/non-finite count.
GeneratedSource generate_attention_check(const AttentionProblem& problem, const std::string& arch);

// The measuring protocol's L2 flush (templates/common/l2_flush.cuh): kt::l2_flush_read.
GeneratedSource generate_l2_flush(const std::string& arch);

enum AttentionCheckKernel : int {
  kAttentionFillRandom = 0,
  kAttentionFillPoison,
  kAttentionReferenceRows,
  kAttentionGatherRows,
  kNumAttentionCheckKernels
};

// Kernel indices within generate_gemm_check()'s name_expressions.
enum GemmCheckKernel : int {
  kFillRandomIn = 0,
  kFillPoisonOut,
  kReferenceSamples,
  kGatherAndCount,
  kNumGemmCheckKernels
};

}  // namespace kt::gen
