// One point of the attention backward's search space, its validity, launch plans, kernel names,
// workspace and the model's time. Two families (AttentionFamily): fa2 (kSm80), FlashAttention-2
// on mma.sync, and fa3 (kSm90), wgmma + TMA with a producer warpgroup and one consumer
// warpgroup per 64 keys (two at head_dim 256, a half of the columns each).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention_config.hpp"
#include "core/device_desc.hpp"
#include "core/launch_plan.hpp"
#include "core/occupancy.hpp"
#include "ops/attention_backward/attention_backward_problem.hpp"
#include "ops/attention_backward/kernels/attention_bwd_split.h"

namespace kt {

struct AttentionBackwardConfig {
  int block_m = 64;  // query rows a CTA takes per step (Br)
  int block_n = 64;  // keys a CTA owns (Bc): fa2 16 or 32 a warp; fa3 64 a consumer warpgroup
  int warps = 4;     // fa2 only; 0 for fa3, whose warpgroups follow from block_n
  int stages = 2;    // Q/dO buffers: fa2 2 loads the next query block during this one; fa3's ring
  AttentionFamily family = AttentionFamily::kSm80;

  // fa3: a consumer warpgroup per 64 keys and head_dim part (attn_bwd::head_dim_parts: at 256
  // two share the keys, each with half the columns), and the producer's. The consumers stage dQ
  // for TMA reductions, with head_dim parts over the step's Q and dO tiles (no room for a staging
  // of its own); head_dim decides, not the config.
  int num_consumers(std::int64_t head_dim) const {
    return block_n / 64 * attn_bwd::head_dim_parts(int(head_dim));
  }
  int num_threads(std::int64_t head_dim) const {
    return family == AttentionFamily::kSm90 ? 128 * (num_consumers(head_dim) + 1) : 32 * warps;
  }
  bool operator==(const AttentionBackwardConfig&) const = default;
};

// The enumerated values (validate() is the authority on combinations): fa2 takes block_m ..
// stages, fa3 its own block_m, block_n and stages.
struct AttentionBackwardDomains {
  std::vector<AttentionFamily> families{AttentionFamily::kSm80, AttentionFamily::kSm90};
  std::vector<int> block_m{32, 64, 128};
  std::vector<int> block_n{64, 128};
  std::vector<int> warps{4, 8};
  std::vector<int> stages{1, 2};
  std::vector<int> fa3_block_m{64, 80, 128};
  std::vector<int> fa3_block_n{64, 128};
  std::vector<int> fa3_stages{2, 3};
};

// "fa2.bm64.bn64.w4.s2" or "fa3.bm64.bn128.s2"; parse is its exact inverse (throws kt::Error
// naming the field, or the canonical spelling).
std::string to_key(const AttentionBackwardConfig& config);
AttentionBackwardConfig parse_attention_backward_config_key(std::string_view key);

// Dynamic shared memory of the main kernel: K and V tiles, `stages` Q and dO tiles with their
// rows' lse and D, and the dSᵀ tile; fa3 AttentionBwdSm90Layout's (two dS tiles, the FP32 dQ
// staging, barriers and alignment too).
int smem_bytes(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c);
// The main kernel's registers a thread as the model and validate() estimate them. fa2: dK and dV
// (head_dim FP32 per 16 keys a warp owns), a query chunk's Sᵀ and dPᵀ, and 90 of addressing and
// operands (ptxas 13.0 allocates 188-255). fa3 with two consumers: the 168 of the launch bounds
// (setmaxnreg gives consumers 240); with one: dK, dV, Sᵀ, dPᵀ and 48 more (ptxas 13.0: 162-251).
int estimated_registers(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c);
std::int64_t num_ctas(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c);

// Why `c` cannot serve `p` on `device`, or nullopt.
std::optional<std::string> validate(const AttentionBackwardProblem& p,
                                    const AttentionBackwardConfig& c, const DeviceDesc& device);

// The runtime's scratch a launch uses, the same for every config of a problem (the semaphores
// are sized for the smallest block_m): the FP32 dQ accumulator, D, the logsumexp in base 2, and
// (deterministic) the CTA ticket and the dQ semaphores, each 256-byte aligned.
struct AttentionBackwardWorkspace {
  std::int64_t dq_accum_offset = 0;
  std::int64_t d_rows_offset = 0;
  std::int64_t lse_log2_offset = 0;
  std::int64_t semaphores_offset = 0;  // deterministic only
  std::int64_t bytes = 0;
};
AttentionBackwardWorkspace attention_backward_workspace(const AttentionBackwardProblem& p);

// The three launches, in order: preprocess (D, zeroing), the main kernel, dQ's conversion.
struct AttentionBackwardLaunch {
  LaunchPlan preprocess;
  LaunchPlan main;
  LaunchPlan convert;
};
// Main: grid (⌈seqlen_k / block_n⌉, heads_kv, batch), or deterministic the same count along x,
// num_threads(head_dim); preprocess and convert: one CTA of 128 threads per 128 / (head_dim / 8)
// rows.
AttentionBackwardLaunch plan_launch(const AttentionBackwardProblem& p,
                                    const AttentionBackwardConfig& c);

// The name expressions of the three kernels, main first:
// "kt::attention_bwd_sm80<kt::bf16, 128, 64, 64, 4, 2, true, false>" (fa3:
// "kt::attention_bwd_sm90<kt::bf16, 128, 64, 128, 2, true, false>"),
// "kt::attention_bwd_preprocess<kt::bf16, 128, 64, false>", "kt::attention_bwd_convert_dq<...>".
std::vector<std::string> attention_backward_kernel_expressions(const AttentionBackwardProblem& p,
                                                               const AttentionBackwardConfig& c);

// Every valid config for `p` on `device`.
std::vector<AttentionBackwardConfig> enumerate_attention_backward_configs(
    const AttentionBackwardProblem& p, const DeviceDesc& device,
    const AttentionBackwardDomains& domains = {});

struct AttentionBackwardEstimate : LaunchEstimate {
  double block_efficiency = 0;  // visible (q, k) pairs over the pairs the visited blocks cover
  double max_cta_steps = 0;     // query blocks the busiest CTA works (all its query heads)
  double compute_us = 0;        // the main kernel's blocks, atomics included
  double serial_us = 0;         // deterministic: the longest chain of ordered dQ additions
  double memory_us = 0;         // the main kernel's bytes at DRAM bandwidth
  double side_us = 0;           // preprocess and convert: their bytes and launches
  double predicted_us = 0;
  double predicted_tflops = 0;
};

// The model (uncalibrated until tuning exports of the backward exist): every visited (query
// block, key block) pair costs its five products (10 · Br · Bc · d FLOPs) at the SM's rate times
// an efficiency, plus a step's fixed cost. fa2: the mma.sync rate below the forward's efficiency
// (smem round trips of dSᵀ, the chunked recomputation) and its Br · d dQ atomics at an L2 rate.
// fa3: the wgmma rate (lower with one consumer warpgroup), the exp unit's share left exposed
// (one exp2 a pair against 10 · d FLOPs) and the part of the dQ TMA reductions no product hides.
// Balanced over the SMs and stretched by wave quantization, never below the busiest CTA;
// deterministic mode adds the key blocks' ordered wait (the last key block of a head starts its
// additions num_n_blocks - 1 block-steps after the first; fa3 also waits for each reduction to
// complete). Plus the preprocess and convert kernels' bytes and launches.
AttentionBackwardEstimate estimate(const AttentionBackwardProblem& p,
                                   const AttentionBackwardConfig& c, const DeviceDesc& device,
                                   int regs_per_thread = 0);

// The model's reasoning for `kerntune explain`, several lines.
std::string explain_config(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c,
                           const DeviceDesc& device);

}  // namespace kt
