// Attention backward configs: keys, validity, launch plans, workspace, the space and the model.
#include "ops/attention_backward/attention_backward_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/arith.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "ops/attention_backward/kernels/attention_bwd_sm90_layout.h"
#include "ops/attention_backward/kernels/attention_bwd_split.h"

namespace kt {

namespace {

// fa2's constants: the share of the mma.sync rate its blocks sustain and the part of the warps'
// shared-memory reads (block_seconds) no mma hides, fitted to the fa2 configs of the version-7
// tunes on an H200 and an H100 (bench/NOTES.md, "Attention backward"); estimates from the parts:
// the FP32 reduction atomics an SM's share of L2 retires per clock and the part of their time no
// mma hides, a step's own cost (its two barriers and the lse and D loads) and, with one Q/dO
// stage, the part of the next step's loads the dQ phase does not hide, a CTA's fixed cost (K and
// V loaded, dK and dV stored) per wave, and each of the three launches.
constexpr double kBwdMmaEfficiency = 0.45;
constexpr double kFa2ExposedSmemShare = 0.5;
constexpr double kDqAtomicsPerClockPerSm = 2.0;
constexpr double kExposedAtomicShare = 0.5;
constexpr double kStepUs = 0.15;
constexpr double kOneStageExposedLoadUs = 0.4;
constexpr double kCtaFixedUs = 3.0;
constexpr double kLaunchUs = 3.0;
constexpr double kSideLaunchUs = 2.0;
// fa3: the share of the wgmma rate two consumer warpgroups sustain between their element-wise
// work, and one alone (no other warpgroup's products under its exp2 and stores); the exp unit's
// time against the products' (one exp2 a pair, 16 a clock an SM, against 10 · d FLOPs at 4096 a
// clock: 25.6 / d) and the part of it the other consumer's products do not hide; a step's own
// cost a consumer (the full barrier, three wgmma waits, the dS stores and two named barriers, the
// dQ staging, and the shared-memory traffic that does not grow with its rows: its K and V read as
// Sᵀ and dPᵀ's A, K as dQ's operand); the FP32 bytes the TMA reductions of an SM retire a clock
// into L2 and the part of their time left exposed; and, deterministic, a step's wait for its
// reductions to complete before the next key block adds. The rate and the step's cost are fitted
// to same-process tunes of 64 against 80 query rows a step at head_dim 128 on an H100 (a step of
// two consumers ~1.3 µs plus ~0.025 µs a row; `2026-12-06-h100-attention-backward-d128-bm80`),
// keeping the H200's version-7 picks (bench/model_regret.py: regret 1.0017 and 1.0000; one
// consumer's configs within 1.11x of their medians) and head_dim 256 within 10%.
// Sᵀ and dPᵀ narrower than 64 query rows a consumer wait on shared memory (block_seconds).
constexpr double kFa3WgmmaEfficiency = 0.75;
constexpr double kFa3OneConsumerFactor = 0.75;
constexpr double kFa3ExpShareTimesHeadDim = 25.6;
constexpr double kFa3ExposedExp = 0.5;
constexpr double kFa3StepUsPerConsumer = 0.35;
constexpr double kFa3ReduceBytesPerClockPerSm = 64.0;
constexpr double kFa3ExposedReduceShare = 0.25;
constexpr double kFa3OrderedReduceUs = 1.0;
// Registers of a thread beyond the accumulators: operands in flight, ldmatrix addresses, the
// step's indices (ptxas 13.0 allocates 188 to 255 registers over the space).
constexpr int kOperandRegisters = 90;
// Deterministic mode's ordered dQ reduction (the semaphore and its wait) holds a few more: at 32
// keys a warp, head_dim 64 and 128 queries ptxas 13.0 spills 8 bytes with two stages.
constexpr int kDeterministicRegisters = 6;
// So does the causal mask's per-element test beside a second stage of 128-query blocks: at 32
// keys a warp and head_dim 64 ptxas 13.0 spills 8 bytes (the full mask fits in 255).
constexpr int kCausalTwoWideStagesRegisters = 6;
constexpr int kMaxRegisters = 255;
// fa3 with one consumer (which keeps the launch's 255 registers): what it uses beyond dK, dV, Sᵀ
// and dPᵀ (attn_bwd::kFa3ConsumerRegisters and kFa3AccumulatorRegisters budget two).
constexpr int kFa3OneConsumerExtraRegisters = 48;
constexpr int kSmallestBlockM = 32;
constexpr std::int64_t kWorkspaceAlign = 256;

std::int64_t align_up(std::int64_t v) { return ceil_div(v, kWorkspaceAlign) * kWorkspaceAlign; }

int keys_per_warp(const AttentionBackwardConfig& c) { return c.block_n / c.warps; }

// The parts a key block's dK, dV and dQ columns are split among (attn_bwd::head_dim_parts: fa2's
// CTAs, fa3's consumer warpgroups), and the columns of each (fa2's kDCols, fa3's kCols).
std::int64_t head_dim_parts(const AttentionBackwardProblem& p) {
  return attn_bwd::head_dim_parts(int(p.head_dim));
}
int part_columns(const AttentionBackwardProblem& p) { return int(p.head_dim / head_dim_parts(p)); }

// fa3: the step's query rows a consumer computes Sᵀ and dPᵀ for (the template's kStepM).
int fa3_step_rows(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  return attn_bwd::fa3_step_rows(int(p.head_dim), c.block_m);
}

// The queries a warp works at once (the template's kQChunk).
int query_chunk(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  const int span = part_columns(p) * (keys_per_warp(c) / 16);
  return span > 128 ? 8 : 2048 / span / 16 * 16;
}

// fa2: the head_dim columns of dQ = dS·K each warp computes (the template's kDqCols): the warps
// split the block's rows in 16-row tiles first, then the columns.
int dq_columns(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  const int warps_m = std::min(c.warps, c.block_m / 16);
  return part_columns(p) / (c.warps / warps_m);
}

// Query blocks the CTA of key block n works for one query head (all of them, or, causal, those
// from the one holding the first row that sees key n · block_n).
std::int64_t query_blocks_seen(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c,
                               std::int64_t n) {
  const std::int64_t m_blocks = ceil_div(p.seqlen_q, c.block_m);
  if (!p.causal) return m_blocks;
  const std::int64_t first_row = n * c.block_n - (p.seqlen_k - p.seqlen_q);
  if (first_row >= p.seqlen_q) return 0;
  return m_blocks - (first_row > 0 ? first_row / c.block_m : 0);
}

std::int64_t rows_of(const AttentionBackwardProblem& p) { return p.batch * p.heads_q * p.seqlen_q; }

LaunchPlan row_kernel_plan(const AttentionBackwardProblem& p) {
  LaunchPlan plan;
  const std::int64_t rows_per_cta = attn_bwd::kRowThreads / attn_bwd::row_slots(int(p.head_dim));
  plan.grid = {std::uint32_t(ceil_div(rows_of(p), rows_per_cta)), 1, 1};
  plan.block = {std::uint32_t(attn_bwd::kRowThreads), 1, 1};
  return plan;
}

// fa2 gives each head_dim part its own CTAs; fa3 its own consumers within one.
std::int64_t cta_parts(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  return c.family == AttentionFamily::kSm90 ? 1 : head_dim_parts(p);
}

// The row tiles (of 64) and the columns of dQ = dS·K one fa3 consumer computes, as the kernel's
// DqSplit: by row tiles while there are as many as consumers, else also by head_dim columns.
struct Fa3DqSplit {
  int row_tiles, cols;
};
Fa3DqSplit fa3_dq_split(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  const int m_tiles = c.block_m / 64, consumers = c.num_consumers(p.head_dim);
  const int row_tiles = m_tiles >= consumers ? m_tiles / consumers : 1;
  return {row_tiles, int(p.head_dim) / (consumers / (m_tiles / row_tiles))};
}

std::optional<std::string> validate_fa2(const AttentionBackwardProblem& p,
                                        const AttentionBackwardConfig& c,
                                        const DeviceDesc& device) {
  if (device.cc_major < 8) return "the fa2 backward family needs compute capability >= 8.0";
  if (c.warps != 4 && c.warps != 8) return "warps must be 4 or 8";
  if (c.block_n != 16 * c.warps && c.block_n != 32 * c.warps)
    return "block_n must be 16 or 32 x warps (each warp owns 16 or 32 keys)";
  if (c.block_m != 32 && c.block_m != 64 && c.block_m != 128)
    return "block_m must be 32, 64 or 128";
  if (c.stages != 1 && c.stages != 2) return "stages must be 1 or 2";
  if (p.head_dim != 64 && p.head_dim != 96 && p.head_dim != 128 && p.head_dim != 256)
    return "head_dim must be 64, 96, 128 or 256";
  if (dq_columns(p, c) % 16 != 0)
    return fmt::format(
        "dQ = dS·K at head_dim {} with block_m {} and {} warps gives a warp {} columns, not whole "
        "16-column pairs",
        p.head_dim, c.block_m, c.warps, dq_columns(p, c));
  if (keys_per_warp(c) * part_columns(p) > 16 * 128)
    return fmt::format(
        "{} keys a warp at {} head_dim columns a CTA keep dK and dV in {} FP32 registers a "
        "thread, over the {} a thread has (16 keys a warp at 128 columns)",
        keys_per_warp(c), part_columns(p), 2 * keys_per_warp(c) * part_columns(p) / 32,
        kMaxRegisters);
  if (estimated_registers(p, c) > kMaxRegisters)
    return fmt::format("needs ~{} registers a thread, over {}", estimated_registers(p, c),
                       kMaxRegisters);
  // Sᵀ and dPᵀ over 16 k16 steps hold more addressing than the estimate counts: ptxas 13.0 spills
  // 12-40 bytes beyond 8 query rows a warp (block_m 64 of 4 warps, 128 of 8), and deterministic
  // 20-36 at block_m 64.
  const int widest_m = std::min(8 * c.warps, p.deterministic ? 32 : 64);
  if (head_dim_parts(p) > 1 && c.block_m > widest_m)
    return fmt::format("head_dim 256 needs block_m <= {} with {} warps{} (registers)", widest_m,
                       c.warps, p.deterministic ? " when deterministic" : "");
  return std::nullopt;
}

std::optional<std::string> validate_fa3(const AttentionBackwardProblem& p,
                                        const AttentionBackwardConfig& c,
                                        const DeviceDesc& device) {
  if (device.arch() != "sm_90a")
    return fmt::format(
        "the fa3 backward family needs sm_90a (compute capability 9.0), device has {}.{}",
        device.cc_major, device.cc_minor);
  if (c.warps != 0)
    return "fa3 configs have no warps field (warps = 0: block_n sets the warpgroups)";
  if (c.block_n != 64 && c.block_n != 128)
    return "fa3 block_n must be 64 or 128 (one or two consumer warpgroups of 64 keys)";
  if (c.block_m != 64 && c.block_m != 80 && c.block_m != 128)
    return "fa3 block_m must be 64, 80 or 128";
  if (c.stages < 2 || c.stages > 4) return "fa3 stages must be 2, 3 or 4";
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    return "the fa3 family needs head_dim 64, 128 or 256";
  if (head_dim_parts(p) > 1 && c.block_n != 64)
    return fmt::format(
        "fa3 at head_dim {} needs block_n 64: its {} consumer warpgroups share one group of 64 "
        "keys, a part of the columns each",
        p.head_dim, head_dim_parts(p));
  if (attn_bwd::fa3_dq_transposed(c.block_m) && (p.head_dim != 128 || c.block_n != 128))
    return fmt::format(
        "fa3 block_m {} computes dQ transposed, head_dim as the wgmma's M in 64-row tiles, one a "
        "consumer: head_dim 128 with block_n 128 (two consumers) only, not head_dim {} with "
        "block_n {}",
        c.block_m, p.head_dim, c.block_n);
  const int step_rows = fa3_step_rows(p, c);
  if (part_columns(p) + step_rows > attn_bwd::kFa3AccumulatorRegisters)
    return fmt::format(
        "fa3 at head_dim {} and block_m {}: a consumer thread would keep {} FP32 accumulators "
        "(dK, dV: {}; Sᵀ, dPᵀ: {}), over the {} of its {} registers that leave room for the "
        "packed operands, dQ and addressing",
        p.head_dim, c.block_m, part_columns(p) + step_rows, part_columns(p), step_rows,
        attn_bwd::kFa3AccumulatorRegisters, attn_bwd::kFa3ConsumerRegisters);
  if (fa3_dq_split(p, c).cols % 64 != 0)
    return fmt::format(
        "fa3 dQ = dS·K splits between the {} consumer warpgroups by 64-row tiles or 64-column "
        "slabs of K: block_m {} at head_dim {} has one of either",
        c.num_consumers(p.head_dim), c.block_m, p.head_dim);
  return std::nullopt;
}

// The time one SM spends on one visited (query block, key block) pair of `c`, with
// `ctas_per_sm` resident.
double block_seconds(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c,
                     const DeviceDesc& d, int ctas_per_sm) {
  // Five products of 2 · block_m · block_n · (columns) FLOPs; each head_dim part computes dV, dK
  // and dQ over its columns, and Sᵀ and dPᵀ over the whole head_dim: a fa2 CTA of all the query
  // rows, a fa3 consumer warpgroup of its share of them. The time is a fa2 CTA's, or a fa3 CTA's
  // with all its parts.
  const double columns = double(part_columns(p));
  const double flops =
      2.0 * c.block_m * c.block_n *
      (c.family == AttentionFamily::kSm90 ? 5.0 * double(p.head_dim)
                                          : 2.0 * double(p.head_dim) + 3.0 * columns);
  const double clock_hz = d.sm_clock_mhz * 1e6;
  if (c.family == AttentionFamily::kSm90) {
    const double sm_rate = d.wgmma_tflops * 1e12 / d.num_sms * kFa3WgmmaEfficiency *
                           (c.num_consumers(p.head_dim) > 1 ? 1.0 : kFa3OneConsumerFactor);
    // Sᵀ and dPᵀ (2 of the 5 products) are m64nNk16 steps with both operands in shared memory, N
    // the consumer's query rows: 2048 + 32 N bytes read at kSmemBytesPerClockPerSm against N / 2
    // tensor-core clocks (2048 N FLOPs at 4096 a clock), so narrower than 64 they wait on shared
    // memory (N = 32 at head_dim 256: 24 clocks against 16).
    const double step_rows = double(fa3_step_rows(p, c));
    const double sdp_stretch =
        std::max(1.0, (2048.0 + 32.0 * step_rows) / kSmemBytesPerClockPerSm / (step_rows / 2.0));
    const double products = (2.0 * sdp_stretch + 3.0) / 5.0;
    const double exposed_exp = kFa3ExposedExp * kFa3ExpShareTimesHeadDim / double(p.head_dim);
    const double reduce_s =
        4.0 * c.block_m * double(p.head_dim) / (kFa3ReduceBytesPerClockPerSm * clock_hz);
    return flops / sm_rate * (products + exposed_exp) + kFa3ExposedReduceShare * reduce_s +
           (kFa3StepUsPerConsumer * c.num_consumers(p.head_dim) +
            (p.deterministic ? kFa3OrderedReduceUs : 0.0)) *
               1e-6;
  }
  const double sm_rate = d.mma_sync_tflops * 1e12 / d.num_sms * kBwdMmaEfficiency *
                         std::min(1.0, 0.5 + 0.0625 * ctas_per_sm * c.warps);
  const double atomics_s = double(c.block_m) * columns / (kDqAtomicsPerClockPerSm * clock_hz);
  // Every warp reads the query block's Q and dO from shared memory for its own keys: as Sᵀ's and
  // dPᵀ's B over the whole head_dim, as dK's and dV's over its part's columns. A FLOP of a warp
  // of 16 keys reads twice the bytes one of 32 keys does.
  const double smem_s = c.warps * 2.0 * c.block_m * (double(p.head_dim) + columns) * 2.0 /
                        (kSmemBytesPerClockPerSm * clock_hz);
  return flops / sm_rate + kExposedAtomicShare * atomics_s + kFa2ExposedSmemShare * smem_s +
         (kStepUs + (c.stages == 1 ? kOneStageExposedLoadUs : 0.0)) * 1e-6;
}

}  // namespace

std::string to_key(const AttentionBackwardConfig& c) {
  if (c.family == AttentionFamily::kSm90)
    return fmt::format("fa3.bm{}.bn{}.s{}", c.block_m, c.block_n, c.stages);
  return fmt::format("fa2.bm{}.bn{}.w{}.s{}", c.block_m, c.block_n, c.warps, c.stages);
}

AttentionBackwardConfig parse_attention_backward_config_key(std::string_view key) {
  const char* hint = "expected e.g. fa2.bm64.bn64.w4.s2 or fa3.bm64.bn128.s2";
  const auto parts = split(key, '.');
  AttentionBackwardConfig c;
  if (parts.size() == 5 && parts[0] == "fa2") {
    parse_key_fields(key, parts,
                     {{"bm", &c.block_m}, {"bn", &c.block_n}, {"w", &c.warps}, {"s", &c.stages}},
                     hint);
  } else if (parts.size() == 5 && parts[0] == "fa3" && parts[4] == "dqr") {
    // A key of template version 5 and before: head_dim now decides how dQ is added.
    throw_invalid(fmt::format(
        "'{}': fa3 keys have no .dqr suffix (head_dim decides how dQ is staged): write '{}'", key,
        key.substr(0, key.size() - 4)));
  } else if (parts.size() == 4 && parts[0] == "fa3") {
    c.family = AttentionFamily::kSm90;
    c.warps = 0;
    parse_key_fields(key, parts, {{"bm", &c.block_m}, {"bn", &c.block_n}, {"s", &c.stages}}, hint);
  } else {
    throw_invalid(fmt::format("'{}' is not an attention backward config key: {}", key, hint));
  }
  if (to_key(c) != key)
    throw_invalid(
        fmt::format("config key '{}' is not canonical: write it as '{}'", key, to_key(c)));
  return c;
}

int smem_bytes(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  if (c.family == AttentionFamily::kSm90)
    return AttentionBwdSm90Layout(int(p.head_dim), c.block_m, c.block_n, c.stages).launch_bytes;
  const std::int64_t kv = std::int64_t(c.block_n) * p.head_dim * 2;
  const std::int64_t q = std::int64_t(c.block_m) * p.head_dim * 2;
  const std::int64_t stats = 2 * std::int64_t(c.block_m) * 4;
  const std::int64_t ds = std::int64_t(c.block_n) * c.block_m * 2;
  return int(2 * kv + c.stages * (2 * q + stats) + ds);
}

int estimated_registers(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  if (c.family == AttentionFamily::kSm90)
    return c.num_consumers(p.head_dim) > 1
               ? 65536 / c.num_threads(p.head_dim) / 8 * 8
               : std::min(kMaxRegisters,
                          int(p.head_dim) + c.block_m + kFa3OneConsumerExtraRegisters);
  const int tiles = std::max(1, keys_per_warp(c) / 16);
  const bool causal_two_wide_stages = p.causal && c.stages == 2 && c.block_m >= 128;
  return tiles * part_columns(p) + tiles * query_chunk(p, c) + kOperandRegisters +
         (p.deterministic ? kDeterministicRegisters : 0) +
         (causal_two_wide_stages ? kCausalTwoWideStagesRegisters : 0);
}

std::int64_t num_ctas(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c) {
  return ceil_div(p.seqlen_k, c.block_n) * p.heads_kv * p.batch * cta_parts(p, c);
}

std::optional<std::string> validate(const AttentionBackwardProblem& p,
                                    const AttentionBackwardConfig& c, const DeviceDesc& device) {
  std::optional<std::string> why = "unknown template family";
  if (c.family == AttentionFamily::kSm80) why = validate_fa2(p, c, device);
  if (c.family == AttentionFamily::kSm90) why = validate_fa3(p, c, device);
  if (why) return why;
  const int smem = smem_bytes(p, c);
  if (smem > device.max_smem_per_block_optin_bytes)
    return fmt::format("needs {} B of shared memory; the device allows {} B per block", smem,
                       device.max_smem_per_block_optin_bytes);
  if (p.heads_kv > 65535 || p.batch * cta_parts(p, c) > 65535)
    return "grid too large (heads_kv and batch must be <= 65535; batch <= 32767 at head_dim 256)";
  if (num_ctas(p, c) > std::int64_t(2147483647)) return "grid too large (over 2^31 - 1 CTAs)";
  return std::nullopt;
}

AttentionBackwardWorkspace attention_backward_workspace(const AttentionBackwardProblem& p) {
  AttentionBackwardWorkspace w;
  const std::int64_t rows = rows_of(p);
  w.dq_accum_offset = 0;
  w.d_rows_offset = align_up(rows * p.head_dim * 4);
  w.lse_log2_offset = align_up(w.d_rows_offset + rows * 4);
  w.semaphores_offset = align_up(w.lse_log2_offset + rows * 4);
  const std::int64_t semaphores =
      p.deterministic
          ? 1 + p.batch * p.heads_q * ceil_div(p.seqlen_q, kSmallestBlockM) * head_dim_parts(p)
          : 0;
  w.bytes = align_up(w.semaphores_offset + semaphores * 4);
  return w;
}

AttentionBackwardLaunch plan_launch(const AttentionBackwardProblem& p,
                                    const AttentionBackwardConfig& c) {
  AttentionBackwardLaunch launch;
  launch.preprocess = row_kernel_plan(p);
  launch.convert = row_kernel_plan(p);
  const std::int64_t n_blocks = ceil_div(p.seqlen_k, c.block_n);
  const std::int64_t parts = cta_parts(p, c);
  if (p.deterministic)
    launch.main.grid = {std::uint32_t(n_blocks * p.heads_kv * p.batch * parts), 1, 1};
  else
    launch.main.grid = {std::uint32_t(n_blocks), std::uint32_t(p.heads_kv),
                        std::uint32_t(p.batch * parts)};
  launch.main.block = {std::uint32_t(c.num_threads(p.head_dim)), 1, 1};
  launch.main.smem_bytes = std::uint32_t(smem_bytes(p, c));
  return launch;
}

std::vector<std::string> attention_backward_kernel_expressions(const AttentionBackwardProblem& p,
                                                               const AttentionBackwardConfig& c) {
  const std::string_view t = device_type_name(p.dtype);
  const char* causal = p.causal ? "true" : "false";
  const char* det = p.deterministic ? "true" : "false";
  return {
      c.family == AttentionFamily::kSm90
          ? fmt::format("kt::attention_bwd_sm90<{}, {}, {}, {}, {}, {}, {}>", t, p.head_dim,
                        c.block_m, c.block_n, c.stages, causal, det)
          : fmt::format("kt::attention_bwd_sm80<{}, {}, {}, {}, {}, {}, {}, {}>", t, p.head_dim,
                        c.block_m, c.block_n, c.warps, c.stages, causal, det),
      fmt::format("kt::attention_bwd_preprocess<{}, {}, {}, {}>", t, p.head_dim, c.block_m, det),
      fmt::format("kt::attention_bwd_convert_dq<{}, {}>", t, p.head_dim)};
}

std::vector<AttentionBackwardConfig> enumerate_attention_backward_configs(
    const AttentionBackwardProblem& p, const DeviceDesc& device,
    const AttentionBackwardDomains& d) {
  std::vector<AttentionBackwardConfig> out;
  for (AttentionFamily family : d.families) {
    const bool fa3 = family == AttentionFamily::kSm90;
    for (int bm : fa3 ? d.fa3_block_m : d.block_m)
      for (int warps : fa3 ? std::vector<int>{0} : d.warps)
        for (int bn : fa3 ? d.fa3_block_n : d.block_n)
          for (int s : fa3 ? d.fa3_stages : d.stages) out.push_back({bm, bn, warps, s, family});
  }
  std::erase_if(
      out, [&](const AttentionBackwardConfig& c) { return validate(p, c, device).has_value(); });
  return out;
}

AttentionBackwardEstimate estimate(const AttentionBackwardProblem& p,
                                   const AttentionBackwardConfig& c, const DeviceDesc& d,
                                   int regs) {
  AttentionBackwardEstimate e;
  e.num_ctas = num_ctas(p, c);
  e.threads = c.num_threads(p.head_dim);
  e.regs_per_thread = regs > 0 ? regs : estimated_registers(p, c);
  e.smem_bytes = smem_bytes(p, c);
  e.occupancy = occupancy(e.threads, e.regs_per_thread, e.smem_bytes, d);
  // fa3: __launch_bounds__(threads, 1) sizes the registers for one CTA an SM.
  if (c.family == AttentionFamily::kSm90 && e.occupancy.ctas_per_sm > 1) {
    e.occupancy.ctas_per_sm = 1;
    e.occupancy.limiter = "launch bounds";
  }
  const int ctas_per_sm = std::max(1, e.occupancy.ctas_per_sm);
  e.waves = wave_stats(e.num_ctas, d.num_sms, ctas_per_sm);

  // Visited (query block, key block) pairs over every CTA; each CTA works its query blocks for
  // every query head of its key/value head.
  const std::int64_t n_blocks = ceil_div(p.seqlen_k, c.block_n);
  const std::int64_t group = p.heads_q / p.heads_kv;
  double visited = 0, max_steps = 0;
  for (std::int64_t n = 0; n < n_blocks; ++n) {
    const double steps = double(query_blocks_seen(p, c, n)) * double(group);
    visited += steps;
    max_steps = std::max(max_steps, steps);
  }
  visited *= double(p.batch) * double(p.heads_kv);
  e.max_cta_steps = max_steps;
  const double covered_pairs = visited * c.block_m * c.block_n;
  e.block_efficiency = covered_pairs > 0 ? p.visible_pairs() / covered_pairs : 0;

  const double block_s = block_seconds(p, c, d, ctas_per_sm);
  // fa2 at head_dim 256: each visited block is worked by the CTAs of both head_dim halves.
  const double parts = double(cta_parts(p, c));
  const double balanced_s =
      visited * parts * block_s / d.num_sms / std::max(e.waves.efficiency, 0.01);
  const double longest_s = max_steps * block_s * ctas_per_sm;
  const double fixed_us = kCtaFixedUs * double(e.num_ctas) / (double(d.num_sms) * ctas_per_sm);
  e.compute_us = std::max(balanced_s, longest_s) * 1e6 + fixed_us;
  if (p.deterministic)
    e.serial_us = (max_steps + double(n_blocks - 1)) * block_s * ctas_per_sm * 1e6 + fixed_us;
  e.memory_us = p.min_bytes() / (d.dram_gbps * 1e9) * 1e6;
  // Preprocess: O and dO read, dQ's FP32 accumulator zeroed, lse read, D and lse_log2 written;
  // convert: the accumulator read, dQ written.
  const double elements = double(rows_of(p)) * double(p.head_dim);
  const double side_bytes = elements * (2.0 * size_bytes(p.dtype) + 4.0 + 4.0) +
                            elements * size_bytes(p.dtype) + double(rows_of(p)) * 12.0;
  e.side_us = side_bytes / (d.dram_gbps * 1e9) * 1e6 + 2 * kSideLaunchUs;
  e.predicted_us = std::max({e.compute_us, e.serial_us, e.memory_us}) + e.side_us + kLaunchUs;
  e.predicted_tflops = p.flops() / (e.predicted_us * 1e-6) / 1e12;
  return e;
}

std::string explain_config(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c,
                           const DeviceDesc& d) {
  const AttentionBackwardEstimate e = estimate(p, c, d);
  const AttentionBackwardWorkspace w = attention_backward_workspace(p);
  std::string out;
  const bool fa3 = c.family == AttentionFamily::kSm90;
  if (fa3 && head_dim_parts(p) > 1)
    out += fmt::format(
        "  family       fa3 backward: wgmma + TMA, a producer and {} consumer warpgroups sharing "
        "64 keys, {} head_dim parts of {} columns (dK, dV in registers; Sᵀ and dPᵀ of {} of the "
        "step's query rows over the whole head_dim in each part; Pᵀ and dSᵀ through shared "
        "memory), {} query rows a step, a ring of {} Q/dO stages\n",
        c.num_consumers(p.head_dim), head_dim_parts(p), part_columns(p), fa3_step_rows(p, c),
        c.block_m, c.stages);
  else if (fa3)
    out += fmt::format(
        "  family       fa3 backward: wgmma + TMA, a producer and {} consumer warpgroup(s) of 64 "
        "keys (dK, dV in registers), {} query rows a step, a ring of {} Q/dO stages\n",
        c.num_consumers(p.head_dim), c.block_m, c.stages);
  else
    out += fmt::format(
        "  family       fa2 backward: mma.sync + cp.async, {} warps of {} keys (dK, dV in "
        "registers), {} query rows a step in chunks of {}, {} Q/dO stage(s)\n",
        c.warps, keys_per_warp(c), c.block_m, query_chunk(p, c), c.stages);
  if (cta_parts(p, c) > 1)
    out += fmt::format(
        "  CTAs         ceil(Nk / Bc) x Hkv x B x {} head_dim parts = {} x {} x {} x {} = {} ({} "
        "query head(s) each; Sᵀ and dPᵀ over the whole head_dim in each part)\n",
        head_dim_parts(p), ceil_div(p.seqlen_k, c.block_n), p.heads_kv, p.batch, head_dim_parts(p),
        e.num_ctas, p.heads_q / p.heads_kv);
  else
    out += fmt::format(
        "  CTAs         ceil(Nk / Bc) x Hkv x B = {} x {} x {} = {} ({} query head(s) each)\n",
        ceil_div(p.seqlen_k, c.block_n), p.heads_kv, p.batch, e.num_ctas, p.heads_q / p.heads_kv);
  out += explain_occupancy(e, d.num_sms);
  out += fmt::format(
      "  blocks       {:.1f}% of the visited (q, k) block area is visible{}; busiest CTA {:.0f} "
      "query blocks\n",
      100 * e.block_efficiency, p.causal ? " (causal: diagonal blocks are masked)" : "",
      e.max_cta_steps);
  out += fmt::format("  dQ           FP32 accumulator, {} {} a block{}\n",
                     c.block_m * (fa3 ? int(p.head_dim) : part_columns(p)),
                     !fa3 ? "atomics"
                     : attn_bwd::fa3_dq_staged_in_stage(int(p.head_dim))
                         ? "elements staged over the step's Q and dO tiles and added by TMA "
                           "reductions"
                         : "elements added by TMA reductions",
                     p.deterministic
                         ? "; deterministic: added in key-block order (semaphores), serial chain " +
                               fmt::format("{:.1f} us", e.serial_us)
                         : "");
  out += fmt::format("  workspace    {} B (dQ accumulator, D, lse_log2{})\n", w.bytes,
                     p.deterministic ? ", semaphores" : "");
  out += fmt::format(
      "  predicted    {:.1f} us = max(compute {:.1f}, memory {:.1f}{}) + preprocess/convert "
      "{:.1f} + launch -> {:.0f} TFLOP/s (10 x pairs x d)\n",
      e.predicted_us, e.compute_us, e.memory_us,
      p.deterministic ? fmt::format(", ordered dQ {:.1f}", e.serial_us) : "", e.side_us,
      e.predicted_tflops);
  return out;
}

}  // namespace kt
