// Attention forward's generated sources by problem and config struct: the kernel (the registered
// op's kernel_source through gen::generate) and the tuner's verification kernels.
#pragma once

#include <string>

#include "core/attention_config.hpp"
#include "generator/generated_source.hpp"

namespace kt::gen {

// The attention forward kernel of the config's family (an fa3 config needs arch sm_90a);
// write_lse selects the variant that stores the row logsumexp. The registered attention op's
// generate() (variant "lse" when write_lse).
GeneratedSource generate_attention(const AttentionProblem& problem, const AttentionConfig& config,
                                   bool write_lse, const std::string& arch);

// The attention verification kernels (templates/attention/attention_check.cuh): random fill,
// poison, FP32 reference rows and the gather/non-finite count.
GeneratedSource generate_attention_check(const AttentionProblem& problem, const std::string& arch);

// Kernel indices within generate_attention_check()'s name_expressions.
enum AttentionCheckKernel : int {
  kAttentionFillRandom = 0,
  kAttentionFillPoison,
  kAttentionReferenceRows,
  kAttentionGatherRows,
  kNumAttentionCheckKernels
};

}  // namespace kt::gen
