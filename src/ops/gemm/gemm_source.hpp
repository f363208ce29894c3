// GEMM's generated sources by problem and config struct: the main kernel(s) (the registered op's
// kernel_source through gen::generate) and the tuner's verification kernels.
#pragma once

#include <string>

#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "generator/generated_source.hpp"

namespace kt::gen {

// The GEMM kernel of the config's family (and, with split-K, the reduce kernel) for `arch`; an
// sm90 config needs arch sm_90a. The registered gemm op's generate(): the same source, so the
// same compile key, as the runtime and the tuner make.
GeneratedSource generate_gemm(const GemmProblem& problem, const GemmConfig& config,
                              const std::string& arch);

// The tuner's verification kernels for a problem's dtypes and layout: random fill, poison,
// sampled float64 reference and the non-finite count (templates/gemm/gemm_check.cuh).
GeneratedSource generate_gemm_check(const GemmProblem& problem, const std::string& arch);

// Kernel indices within generate_gemm_check()'s name_expressions.
enum GemmCheckKernel : int {
  kFillRandomIn = 0,
  kFillPoisonOut,
  kReferenceSamples,
  kGatherAndCount,
  kNumGemmCheckKernels
};

}  // namespace kt::gen
