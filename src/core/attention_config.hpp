// One point of the attention-forward search space, declared once: fields and domains, validity,
// launch plan, template arguments, and the model's estimate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention_problem.hpp"
#include "core/device_desc.hpp"
#include "core/launch_plan.hpp"
#include "core/model_rank.hpp"
#include "core/occupancy.hpp"

namespace kt {

// Template family. kSm80 ("fa2"): FlashAttention-2 on mma.sync, K/V streamed by cp.async (runs
// on sm_80+). kSm90 ("fa3"): wgmma + TMA, a producer warpgroup feeding block_m / 64 consumer
// warpgroups of 64 query rows each (sm_90a only), which may take turns at the tensor cores
// (ping-pong).
enum class AttentionFamily : std::uint8_t { kSm80, kSm90 };

struct AttentionConfig {
  int block_m = 128;  // query rows per CTA (Br); fa2: 16 or 32 per warp; fa3: 64 per consumer
  int block_n = 64;   // keys per inner step (Bc)
  int warps = 8;      // fa2 only; 0 for fa3, whose warps follow from block_m (num_warps())
  int stages = 2;     // K/V shared-memory buffers
  AttentionFamily family = AttentionFamily::kSm80;
  bool pingpong = false;  // fa3 with two or three consumers: one's softmax under the others' GEMMs
  bool pack_gqa = false;  // fa3, one query row (a decode step): a KV head's query heads as its rows
  // fa3 split-KV: CTAs a query block's keys are divided among (1: none); their partial outputs are
  // combined by a second kernel. For short query blocks (a decode step or a small chunk) against
  // long key sequences, whose one CTA per query block would leave SMs idle.
  int splits = 1;
  // fa3, not with split-KV or pack_gqa: a grid of at most the CTAs the SMs hold at once, each
  // working a sequence of query blocks, the next one's Q (in a second buffer) and K loading while
  // it computes the last (no CTA launch, Q load and pipeline fill per query block).
  bool persistent = false;

  // fa3: block_m / 64 consumer warpgroups and a producer, a warpgroup beside two or three
  // consumers (setmaxnreg moves its registers to them), one warp beside one (fa3::cta_threads).
  int num_warps() const {
    if (family != AttentionFamily::kSm90) return warps;
    return block_m > 64 ? 4 * (block_m / 64 + 1) : 5;
  }
  int num_threads() const { return 32 * num_warps(); }
  bool operator==(const AttentionConfig&) const = default;
};

// The value domains the tuner enumerates (validate() is the authority on combinations): fa2
// takes block_m .. stages, fa3 its own block_m, block_n and stages.
struct AttentionDomains {
  std::vector<AttentionFamily> families{AttentionFamily::kSm80, AttentionFamily::kSm90};
  std::vector<int> block_m{64, 128, 256};
  std::vector<int> warps{4, 8};
  std::vector<int> block_n{32, 64, 128};
  std::vector<int> stages{1, 2};
  std::vector<int> fa3_block_m{64, 128, 192};
  // 80 for head_dim 256 only; no 176 (FlashAttention-3's non-causal d128 tile loses to 128 here:
  // bench/NOTES.md, "Attention").
  std::vector<int> fa3_block_n{64, 80, 128};
  std::vector<int> fa3_stages{2, 3, 4};
  std::vector<bool> fa3_pingpong{false, true};
  std::vector<int> fa3_splits{1, 2, 3, 4, 6, 8, 12, 16};
  std::vector<bool> fa3_persistent{false, true};
};

// Canonical key, e.g. "fa2.bm128.bn64.w8.s2", "fa3.bm128.bn128.s2", with ping-pong
// "fa3.bm128.bn128.s2.pp", with packed GQA rows "fa3.bm64.bn128.s3.gqa", split-KV
// "fa3.bm64.bn128.s3.gqa.kv8", persistent "fa3.bm128.bn128.s2.pp.pers"; parse is its exact inverse
// (throws kt::Error naming the field, or the canonical spelling).
std::string to_key(const AttentionConfig& config);
AttentionConfig parse_attention_config_key(std::string_view key);

// The problem the kernel computes for `p` under `c`: `p` itself, or with pack_gqa the
// heads_q / heads_kv query heads of each KV head as that head's query rows (heads_q = heads_kv,
// seqlen_q = heads_q / heads_kv; one query row each, so a causal mask hides nothing). Q and O
// are addressed with the head stride as the row stride (AttentionKernel).
AttentionProblem kernel_problem(const AttentionProblem& p, const AttentionConfig& c);

int smem_bytes(const AttentionProblem& p, const AttentionConfig& c);
// Tiles of the main kernel, a CTA's work without persistence: every query block of every head
// and batch entry, times the splits with split-KV.
std::int64_t num_tiles(const AttentionProblem& p, const AttentionConfig& c);
// Split-KV's partial outputs and logsumexps (AttentionParams::partials): splits x rows x
// (head_dim + 1) FP32 over the kernel problem's rows; 0 without splits.
std::int64_t split_workspace_bytes(const AttentionProblem& p, const AttentionConfig& c);

std::optional<std::string> validate(const AttentionProblem& p, const AttentionConfig& c,
                                    const DeviceDesc& device);
// The CTAs of a persistent config's grid when the device holds `resident_ctas` at once: that
// many, or one a tile when there are fewer tiles. With split-KV, whose items are even (splits of
// tiles of one length), the fewest CTAs that work them in as many turns: 2048 items on 132
// resident CTAs take 16 turns either way, and 128 CTAs work 16 each where 132 would leave 64 of
// them idle for the last turn, streaming at a fraction of the bandwidth.
std::int64_t persistent_grid(const AttentionProblem& p, const AttentionConfig& c,
                             std::int64_t resident_ctas);
// The FlashAttention grid (query blocks x splits, heads, batch); a persistent config's is
// (persistent_grid(resident_ctas), 1, 1), resident_ctas being the CTAs the device holds at once,
// or a CTA a tile when it is 0 (unknown: the kernel is correct with any grid).
LaunchPlan plan_launch(const AttentionProblem& p, const AttentionConfig& c,
                       std::int64_t resident_ctas = 0);
// The entries of a causal section of a persistent grid of `grid` CTAs (the launch's): of the
// powers of two up to the L2 bound (attention_l2_section), the one under which the model's
// busiest CTA (its tiles in the kernel's fixed order: a snake over the sectioned order) sums the
// fewest key blocks, the larger on a tie. The L2 bound itself for a full mask, a packed batch or
// a grid of more tiles than the model works one by one.
int persistent_causal_section(const AttentionProblem& p, const AttentionConfig& c,
                              std::int64_t grid);
// Split-KV's second kernel: one warp a row of the kernel problem, four rows a CTA.
LaunchPlan plan_split_combine(const AttentionProblem& p, const AttentionConfig& c);

// "kt::attention_fwd_sm80<kt::bf16, 128, 128, 64, 8, 2, true, false>" or
// "kt::attention_fwd_sm90<kt::bf16, 128, 128, 128, 2, false, false, true, false, false>".
std::string attention_kernel_expression(const AttentionProblem& p, const AttentionConfig& c,
                                        bool write_lse);
// Split-KV's combine kernel, "kt::attention_split_combine<kt::bf16, 128>".
std::string split_combine_expression(const AttentionProblem& p);

std::vector<AttentionConfig> enumerate_attention_configs(const AttentionProblem& p,
                                                         const DeviceDesc& device,
                                                         const AttentionDomains& domains = {});

struct AttentionEstimate : LaunchEstimate {
  double block_efficiency = 0;  // visible (q, k) pairs over the pairs the visited blocks cover
  double combine_us = 0;        // split-KV's second kernel (0 without splits)
  // Persistent CTAs: the busiest CTA's time over the mean of the grid's (its fixed order of tiles
  // leaves the sums uneven); 0 when not modelled tile by tile.
  double persistent_imbalance = 0;
  // Causal, one CTA a query block or persistent: the entries of a section of the tiles' order
  // (attention_causal_section, persistent_causal_section for the device's resident CTAs); 0
  // otherwise.
  int causal_section = 0;
  double compute_us = 0;
  double memory_us = 0;
  double predicted_us = 0;
  double predicted_tflops = 0;
};

AttentionEstimate estimate(const AttentionProblem& p, const AttentionConfig& c,
                           const DeviceDesc& device, int regs_per_thread = 0);

using RankedAttentionConfig = Ranked<AttentionConfig, AttentionEstimate>;
// Each config with its estimate, fastest predicted first (rank_by_estimate).
std::vector<RankedAttentionConfig> rank_by_model(const AttentionProblem& p,
                                                 const std::vector<AttentionConfig>& configs,
                                                 const DeviceDesc& device);

}  // namespace kt
