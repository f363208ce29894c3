// One point of the attention-forward search space (the FA2-style sm80 family), declared once:
// fields and domains, validity, launch plan, template arguments, and the model's estimate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention_problem.hpp"
#include "core/device_desc.hpp"
#include "core/launch_plan.hpp"
#include "core/occupancy.hpp"

namespace kt {

struct AttentionConfig {
  int block_m = 128;  // query rows per CTA (Br); 16 or 32 per warp
  int block_n = 64;   // keys per inner step (Bc)
  int warps = 8;
  int stages = 2;     // K/V shared-memory buffers
  bool operator==(const AttentionConfig&) const = default;
};

struct AttentionDomains {
  std::vector<int> block_m{64, 128, 256};
  std::vector<int> warps{4, 8};
  std::vector<int> block_n{32, 64, 128};
  std::vector<int> stages{1, 2};
};

// Canonical key, e.g. "fa2.bm128.bn64.w8.s2"; parse is its exact inverse.
std::string to_key(const AttentionConfig& config);
AttentionConfig parse_attention_config_key(std::string_view key);

int smem_bytes(const AttentionProblem& p, const AttentionConfig& c);
std::int64_t num_ctas(const AttentionProblem& p, const AttentionConfig& c);

std::optional<std::string> validate(const AttentionProblem& p, const AttentionConfig& c,
                                    const DeviceDesc& device);
LaunchPlan plan_launch(const AttentionProblem& p, const AttentionConfig& c);

// "kt::attention_fwd_sm80<kt::bf16, 128, 128, 64, 8, 2, true, false>".
std::string attention_kernel_expression(const AttentionProblem& p, const AttentionConfig& c,
                                        bool write_lse);

std::vector<AttentionConfig> enumerate_attention_configs(const AttentionProblem& p,
                                                         const DeviceDesc& device,
                                                         const AttentionDomains& domains = {});

struct AttentionEstimate {
  std::int64_t num_ctas = 0;
  int threads = 0, regs_per_thread = 0, smem_bytes = 0;
  Occupancy occupancy;
  WaveStats waves;
  double block_efficiency = 0;  // visible (q, k) pairs over the pairs the visited blocks cover
  double compute_us = 0;
  double memory_us = 0;
  double predicted_us = 0;
  double predicted_tflops = 0;
};

AttentionEstimate estimate(const AttentionProblem& p, const AttentionConfig& c,
                           const DeviceDesc& device, int regs_per_thread = 0);

struct RankedAttentionConfig {
  AttentionConfig config;
  AttentionEstimate estimate;
};
std::vector<RankedAttentionConfig> rank_by_model(const AttentionProblem& p,
                                                 const std::vector<AttentionConfig>& configs,
                                                 const DeviceDesc& device);

}  // namespace kt
