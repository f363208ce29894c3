// The attention-forward op declaration and its model, one estimate per family (fa2 on mma.sync,
// fa3 on wgmma); constants fitted to tuning exports (bench/NOTES.md, "Attention").
#include "core/attention_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/arith.hpp"
#include "core/attention_order.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace kt {

namespace {

// fa2: the fraction of the mma rate its warps sustain (softmax, rescaling and the exp unit take
// the rest); the part of their shared-memory reads of K and V (estimate) no mma hides; a key
// block's overhead (barriers, the row max and O's rescaling) as the time of this many more keys;
// what one K/V stage, whose loads wait for the block before, costs over two; and the fixed cost
// of a CTA (Q load, pipeline fill, O store), paid once per wave of CTAs. Fitted to tuning exports
// (bench/NOTES.md, "Attention").
constexpr double kAttentionMmaEfficiency = 0.6;
constexpr double kFa2ExposedSmemShare = 0.5;
constexpr double kFa2BlockOverheadKeys = 4.0;
constexpr double kFa2OneStageFactor = 1.05;
constexpr double kFa2CtaFixedUs = 3.1;
constexpr double kLaunchUs = 3.0;

// fa3: the fraction of the wgmma rate its consumers sustain between softmax steps; the share of
// the exp unit's time (exps of a block over its mma time: 64 / d on Hopper, 16 exp2 per clock
// per SM against 4096 FLOPs) left exposed — 0.9 of it when an SM holds two consumer warpgroups
// (two per CTA, or one-consumer CTAs two per SM), 0.75 when two take turns (ping-pong), 0.63 with
// three (one softmax under two others' GEMMs, turns or not), all of it with a single one, which
// also leaves issue gaps (the one-warpgroup factor, as for the GEMM); and the per-block overhead
// (barriers, row reductions), as the time of this many more keys a block: 64-key blocks ran 6%
// behind 128-key ones; and the fixed cost of a CTA (Q load, pipeline fill, O store), paid once per
// wave of CTAs. Fitted to tuning exports (bench/NOTES.md, "Attention").
constexpr double kFa3WgmmaEfficiency = 0.85;
constexpr double kFa3CtaFixedUs = 2.4;
// fa3 persistent: what a CTA's further query blocks each still pay of that fixed cost once their
// Q and K load under the block before (the first S with no P·V beside it, O's normalization and
// staging). An estimate from the parts until tuning exports fit it.
constexpr double kFa3PersistentTileUs = 0.6;
// fa3 persistent CTAs that share an SM (one-consumer tiles, two or three an SM) work their blocks
// this much slower than the same tiles launched one CTA a query block: 1.07-1.18x the one-CTA-a-
// block time at 1k-16k rows where the model said 0.98 (H100, every such pair of the suite's tune;
// bench/NOTES.md, "Attention"). Started together, the co-resident CTAs stay in step, so their
// softmax phases overlap each other's rather than the others' GEMMs.
constexpr double kFa3PersistentSharedSmFactor = 1.15;
constexpr double kFa3ExpShareTimesHeadDim = 64;
constexpr double kFa3ExposedExpOverlapped = 0.9;
constexpr double kFa3ExposedExpPingPong = 0.75;
constexpr double kFa3ExposedExpThreeConsumers = 0.63;
constexpr double kFa3SingleWarpgroupFactor = 0.8;
constexpr double kFa3BlockOverheadKeys = 8.2;
// fa3: dynamic shared memory beyond the Q tile and K/V stages (mbarriers, 1024-byte alignment),
// and the registers: two or three consumers, the __launch_bounds__ cap (65536 / threads) that
// setmaxnreg splits unevenly; one consumer (no setmaxnreg), what the consumer holds — O (d/2), S
// (Bc/2), P (Bc/4) — plus addressing (ptxas 13.0: 106, 154, 138, 186 registers for d64 Bc64, d64
// Bc128, d128 Bc64, d128 Bc128; this gives 104, 152, 136, 184): beside a one-warp producer (160
// threads) d64 Bc64 runs three CTAs per SM and d128 Bc64 two.
constexpr int kFa3SmemReserveBytes = 2048;
constexpr int kFa3OneConsumerAddressingRegs = 24;
// ... and the tile loop of a persistent one (ptxas 13.0: 20 to 28 more).
constexpr int kFa3PersistentLoopRegs = 24;
// Split-KV: the combine kernel's launch behind the main one, in the same stream.
constexpr double kSplitCombineUs = 2.0;
// Split-KV's key ranges: at most one a lane of the combine kernel's warp.
constexpr int kMaxSplits = 32;

int estimated_registers(const AttentionProblem& p, const AttentionConfig& c) {
  if (c.family == AttentionFamily::kSm90)
    return c.block_m > 64 ? 65536 / c.num_threads() / 8 * 8
                          : std::min(255, int(p.head_dim) / 2 + c.block_n / 2 + c.block_n / 4 +
                                              kFa3OneConsumerAddressingRegs +
                                              (c.persistent ? kFa3PersistentLoopRegs : 0));
  const int d = int(p.head_dim);
  const int tiles = c.block_m / c.warps / 16;  // m16 row tiles per warp
  // O accumulators (16 x d per tile), S (16 x block_n per tile), P, the Q fragments (kept in
  // registers for one tile), addressing.
  return std::min(255,
                  tiles * (d / 2 + c.block_n / 2 + c.block_n / 4) + (tiles == 1 ? d / 4 : 0) + 40);
}

// Key blocks a CTA of query block `qb` visits, and the visible pairs they cover.
std::int64_t visited_key_blocks(const AttentionProblem& p, const AttentionConfig& c,
                                std::int64_t qb) {
  const std::int64_t key_blocks = ceil_div(p.seqlen_k, c.block_n);
  if (!p.causal) return key_blocks;
  const std::int64_t last_row = std::min(p.seqlen_q, (qb + 1) * c.block_m) - 1;
  const std::int64_t last_key = last_row + (p.seqlen_k - p.seqlen_q);
  if (last_key < 0) return 0;
  return std::min(key_blocks, last_key / c.block_n + 1);
}

// The share of query block `qb`'s rows that do its work: an fa3 consumer warpgroup (64 rows) with
// no rows left (past seqlen_q) skips the block's products, ping-pong or not; fa2's warps compute
// the whole block.
double working_row_share(const AttentionProblem& p, const AttentionConfig& c, std::int64_t qb) {
  if (c.family != AttentionFamily::kSm90) return 1.0;
  const std::int64_t rows = std::min<std::int64_t>(c.block_m, p.seqlen_q - qb * c.block_m);
  return double(ceil_div(rows, 64) * 64) / double(c.block_m);
}

// The most tiles a persistent grid's launch is modelled tile by tile (a loop over them per config
// and candidate section, on the dispatch path of an untuned shape); past it, as balanced.
constexpr std::int64_t kPersistentModelTiles = std::int64_t(1) << 17;

// The times of a persistent grid of `grid` CTAs but for its first CTA-wide fixed cost: its CTAs
// work the items in the fixed order of fa3::cta_tile (sectioned_slot over snake_index,
// common/work_order.h, causal sections of `section` entries; with split-KV an item is a split of a
// tile, the tile's splits consecutive), so the launch lasts as long as the CTA whose items sum the
// most, each item its visited key blocks at `block_s` and every item after a CTA's first `tile_s`.
// A causal order that leaves the CTAs' sums uneven (a snake whose turns straddle the sections)
// costs exactly what it costs here. `sequences`: one problem, or a packed batch's sequences.
struct PersistentGrid {
  double busiest_s;  // the CTA whose tiles sum the most
  double mean_s;     // the grid's CTAs on average
};
std::optional<PersistentGrid> persistent_grid_s(const AttentionProblem& p,
                                                const std::vector<AttentionProblem>& sequences,
                                                const AttentionConfig& c, std::int64_t grid,
                                                int section, double block_s, double tile_s) {
  const std::int64_t m_blocks = ceil_div(p.seqlen_q, c.block_m);
  const std::int64_t entries = p.heads_q * p.batch;
  const std::int64_t items = m_blocks * entries * c.splits;
  if (items > kPersistentModelTiles || grid < 1) return std::nullopt;
  const int ctas = int(std::min(grid, items));  // the launch's grid (AttentionKernel)
  double busiest = 0, total = 0;
  for (int cta = 0; cta < ctas; ++cta) {
    double cta_s = 0;
    for (int turn = 0;; ++turn) {
      const std::int64_t index = snake_index(turn, cta, ctas);
      if (index >= items) break;
      const WorkSlot slot = sectioned_slot(int(index / c.splits), int(m_blocks), int(entries),
                                           p.causal ? section : 1);
      const std::int64_t qb = p.causal ? m_blocks - 1 - slot.block : slot.block;
      const AttentionProblem& s = sequences[p.varlen ? std::size_t(slot.entry / p.heads_q) : 0];
      if (qb * c.block_m >= s.seqlen_q) continue;  // past a shorter sequence's rows
      const std::int64_t split = index % c.splits, blocks = visited_key_blocks(s, c, qb);
      const std::int64_t split_blocks =
          blocks * (split + 1) / c.splits - blocks * split / c.splits;  // fa3::split_range
      cta_s +=
          double(split_blocks) * working_row_share(s, c, qb) * block_s + (turn > 0 ? tile_s : 0);
    }
    busiest = std::max(busiest, cta_s);
    total += cta_s;
  }
  return PersistentGrid{busiest, total / ctas};
}

std::optional<std::string> validate_sm80(const AttentionProblem& p, const AttentionConfig& c,
                                         const DeviceDesc& device) {
  if (device.cc_major < 8) return "the fa2 family needs compute capability >= 8.0";
  if (c.splits != 1) return "split-KV (splits > 1) is an fa3 feature";
  if (c.persistent) return "persistent CTAs are an fa3 feature";
  if (c.warps != 4 && c.warps != 8) return "warps must be 4 or 8";
  if (c.block_m != 16 * c.warps && c.block_m != 32 * c.warps)
    return "block_m must be 16 or 32 x warps (each warp owns 16 or 32 query rows)";
  if (c.block_m == 32 * c.warps && (p.head_dim == 256 || c.block_n == 128))
    return "32 query rows per warp need head_dim <= 128 and block_n <= 64 (registers)";
  if (c.block_n != 32 && c.block_n != 64 && c.block_n != 128)
    return "block_n must be 32, 64 or 128";
  if (c.stages != 1 && c.stages != 2) return "stages must be 1 or 2";
  if (p.head_dim != 64 && p.head_dim != 96 && p.head_dim != 128 && p.head_dim != 256)
    return "head_dim must be 64, 96, 128 or 256";
  if (p.head_dim == 256 && c.block_n > 64) return "head_dim 256 needs block_n <= 64 (registers)";
  return std::nullopt;
}

std::optional<std::string> validate_sm90(const AttentionProblem& p, const AttentionConfig& c,
                                         const DeviceDesc& device) {
  if (device.arch() != "sm_90a")
    return fmt::format("the fa3 family needs sm_90a (compute capability 9.0), device has {}.{}",
                       device.cc_major, device.cc_minor);
  if (c.warps != 0)
    return "fa3 configs have no warps field (warps = 0: block_m sets the warpgroups)";
  if (c.block_m != 64 && c.block_m != 128 && c.block_m != 192)
    return "fa3 block_m must be 64, 128 or 192 (one to three consumer warpgroups of 64 query rows)";
  if (c.block_n != 64 && c.block_n != 80 && c.block_n != 128)
    return "fa3 block_n must be 64, 80 or 128";
  // A consumer holds O (head_dim / 2 FP32 a thread), S (block_n / 2) and P (block_n / 4).
  if (c.block_n == 80 && p.head_dim != 256)
    return "fa3 block_n 80 is for head_dim 256, where 128 keys exceed the registers";
  if (c.pingpong && c.block_m == 64)
    return "fa3 ping-pong needs two or three consumers (block_m >= 128)";
  if (c.block_m == 192 && (p.head_dim != 64 || c.block_n > 128))
    return "fa3 block_m 192 needs head_dim 64 and block_n <= 128 (160 registers a consumer)";
  if (c.pack_gqa && (p.seqlen_q != 1 || p.heads_q == p.heads_kv || c.block_m != 64))
    return "fa3 pack_gqa needs one query row, heads_q > heads_kv and block_m 64";
  if (c.stages < 2 || c.stages > 4)
    return "fa3 stages must be 2, 3 or 4 (P·V of block j - 1 holds a stage while block j loads)";
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    return "the fa3 family needs head_dim 64, 128 or 256";
  if (p.head_dim == 256 && c.block_n > 80)
    return "fa3 head_dim 256 needs block_n 64 or 80 (registers)";
  if (c.splits < 1 || c.splits > kMaxSplits)
    return fmt::format("fa3 splits must be 1 to {}", kMaxSplits);
  if (c.splits > 1 && p.varlen) return "fa3 split-KV does not serve packed varlen batches";
  if (c.persistent && num_tiles(p, c) <= device.num_sms)
    return fmt::format(
        "fa3 persistent CTAs need more query blocks{} than SMs ({} of {} rows for {} SMs): one "
        "wave leaves nothing to overlap",
        c.splits > 1 ? " times splits" : "", num_tiles(p, c), c.block_m, device.num_sms);
  if (c.splits > 1) {
    const AttentionProblem k = kernel_problem(p, c);
    if (c.block_m != ceil_div(k.seqlen_q, 64) * 64)
      return fmt::format(
          "fa3 split-KV serves one query block a head, the smallest that holds its {} query "
          "rows{}: block_m {}",
          k.seqlen_q, c.pack_gqa ? " (packed)" : "", ceil_div(k.seqlen_q, 64) * 64);
    if (c.splits > ceil_div(k.seqlen_k, c.block_n))
      return fmt::format("fa3 split-KV: more splits ({}) than key blocks ({} of {} keys)", c.splits,
                         ceil_div(k.seqlen_k, c.block_n), c.block_n);
  }
  return std::nullopt;
}

// The rate on blocks of `block_n` keys relative to 128-key blocks: each block also pays its
// overhead, `overhead_keys` keys' worth (kFa3BlockOverheadKeys, kFa2BlockOverheadKeys).
double block_factor(int block_n, double overhead_keys) {
  const auto share = [&](double keys) { return keys / (keys + overhead_keys); };
  return share(block_n) / share(128);
}

// The FLOP rate one SM sustains on this config's blocks, with `ctas_per_sm` resident.
double sm_flops_per_s(const AttentionProblem& p, const AttentionConfig& c, const DeviceDesc& d,
                      int ctas_per_sm) {
  if (c.family == AttentionFamily::kSm90) {
    const int consumers = c.block_m / 64 * ctas_per_sm;  // consumer warpgroups per SM
    const bool overlapped = consumers >= 2;
    const double exposed_exp = (consumers >= 3 ? kFa3ExposedExpThreeConsumers
                                : c.pingpong   ? kFa3ExposedExpPingPong
                                : overlapped   ? kFa3ExposedExpOverlapped
                                               : 1.0) *
                               kFa3ExpShareTimesHeadDim / double(p.head_dim);
    return d.wgmma_tflops * 1e12 / d.num_sms * kFa3WgmmaEfficiency *
           (overlapped ? 1.0 : kFa3SingleWarpgroupFactor) *
           block_factor(c.block_n, kFa3BlockOverheadKeys) / (1.0 + exposed_exp);
  }
  return d.mma_sync_tflops * 1e12 / d.num_sms * kAttentionMmaEfficiency *
         std::min(1.0, 0.5 + 0.0625 * ctas_per_sm * c.warps) *
         block_factor(c.block_n, kFa2BlockOverheadKeys) /
         (c.stages == 1 ? kFa2OneStageFactor : 1.0);
}

}  // namespace

std::string to_key(const AttentionConfig& c) {
  if (c.family == AttentionFamily::kSm90)
    return fmt::format("fa3.bm{}.bn{}.s{}{}{}{}{}", c.block_m, c.block_n, c.stages,
                       c.pingpong ? ".pp" : "", c.pack_gqa ? ".gqa" : "",
                       c.splits > 1 ? fmt::format(".kv{}", c.splits) : "",
                       c.persistent ? ".pers" : "");
  return fmt::format("fa2.bm{}.bn{}.w{}.s{}", c.block_m, c.block_n, c.warps, c.stages);
}

AttentionConfig parse_attention_config_key(std::string_view key) {
  const auto parts = split(key, '.');
  const char* hint =
      "expected e.g. fa2.bm128.bn64.w8.s2, fa3.bm128.bn128.s2, fa3.bm128.bn128.s2.pp or "
      "fa3.bm64.bn64.s3.gqa.kv4, fa3.bm128.bn128.s2.pp.pers";
  AttentionConfig c;
  if (parts.size() == 5 && parts[0] == "fa2") {
    parse_key_fields(key, parts,
                     {{"bm", &c.block_m}, {"bn", &c.block_n}, {"w", &c.warps}, {"s", &c.stages}},
                     hint);
  } else if (parts.size() >= 4 && parts.size() <= 8 && parts[0] == "fa3") {
    c.family = AttentionFamily::kSm90;
    c.warps = 0;
    std::size_t i = 4;
    c.pingpong = i < parts.size() && parts[i] == "pp";
    i += c.pingpong;
    c.pack_gqa = i < parts.size() && parts[i] == "gqa";
    i += c.pack_gqa;
    if (i < parts.size() && parts[i].substr(0, 2) == "kv") {
      const std::int64_t splits = parse_int(parts[i].substr(2), "config field 'kv' (splits)");
      if (splits < 2 || splits > kMaxSplits)
        throw_invalid(
            fmt::format("config field 'kv' = {} is out of range (2 to {}; no field for "
                        "one split)",
                        splits, kMaxSplits));
      c.splits = int(splits);
      ++i;
    }
    c.persistent = i < parts.size() && parts[i] == "pers";
    i += c.persistent;
    if (i != parts.size())
      throw_invalid(
          fmt::format("'{}' is not an attention config key (fa3 keys end in .pp, .gqa, "
                      ".kv<splits>, .pers, in that order, each optional): {}",
                      key, hint));
    parse_key_fields(key, parts, {{"bm", &c.block_m}, {"bn", &c.block_n}, {"s", &c.stages}}, hint);
  } else {
    throw_invalid(fmt::format("'{}' is not an attention config key: {}", key, hint));
  }
  if (to_key(c) != key)
    throw_invalid(
        fmt::format("config key '{}' is not canonical: write it as '{}'", key, to_key(c)));
  return c;
}

int smem_bytes(const AttentionProblem& p, const AttentionConfig& c) {
  const int e = size_bytes(p.dtype);
  // Q (two buffers when persistent), K and V stages.
  const int q = int(c.block_m * p.head_dim * e) * (c.persistent ? 2 : 1);
  const int tiles = q + int(c.stages * 2 * c.block_n * p.head_dim * e);
  return c.family == AttentionFamily::kSm90 ? kFa3SmemReserveBytes + tiles : tiles;
}

AttentionProblem kernel_problem(const AttentionProblem& p, const AttentionConfig& c) {
  if (!c.pack_gqa) return p;
  AttentionProblem k = p;
  k.seqlen_q = p.heads_q / p.heads_kv;
  k.heads_q = p.heads_kv;
  k.causal = false;
  return k;
}

std::int64_t num_tiles(const AttentionProblem& p, const AttentionConfig& c) {
  const AttentionProblem k = kernel_problem(p, c);
  return ceil_div(k.seqlen_q, c.block_m) * c.splits * k.heads_q * k.batch;
}

std::int64_t split_workspace_bytes(const AttentionProblem& p, const AttentionConfig& c) {
  if (c.splits <= 1) return 0;
  const AttentionProblem k = kernel_problem(p, c);
  return std::int64_t(c.splits) * k.batch * k.heads_q * k.seqlen_q * (k.head_dim + 1) * 4;
}

std::optional<std::string> validate(const AttentionProblem& p, const AttentionConfig& c,
                                    const DeviceDesc& device) {
  std::optional<std::string> why = "unknown template family";
  if (c.family == AttentionFamily::kSm80) why = validate_sm80(p, c, device);
  if (c.family == AttentionFamily::kSm90) why = validate_sm90(p, c, device);
  if (why) return why;
  const int smem = smem_bytes(p, c);
  if (smem > device.max_smem_per_block_optin_bytes)
    return fmt::format("needs {} B of shared memory; the device allows {} B per block", smem,
                       device.max_smem_per_block_optin_bytes);
  if (num_tiles(p, c) > std::int64_t(65535) * 65535 || p.heads_q > 65535 || p.batch > 65535)
    return "grid too large (heads_q and batch must be <= 65535)";
  if (c.persistent && num_tiles(p, c) > std::int64_t(2147483647))
    return "too many query blocks for a persistent grid (over 2^31 - 1)";
  return std::nullopt;
}

std::int64_t persistent_grid(const AttentionProblem& p, const AttentionConfig& c,
                             std::int64_t resident_ctas) {
  const std::int64_t items = num_tiles(p, c);
  if (resident_ctas <= 0 || items <= resident_ctas) return items;
  return c.splits > 1 ? ceil_div(items, ceil_div(items, resident_ctas)) : resident_ctas;
}

LaunchPlan plan_launch(const AttentionProblem& problem, const AttentionConfig& c,
                       std::int64_t resident_ctas) {
  const AttentionProblem p = kernel_problem(problem, c);
  LaunchPlan plan;
  if (c.persistent) {
    plan.grid = {std::uint32_t(persistent_grid(problem, c, resident_ctas)), 1, 1};
  } else {
    plan.grid = {std::uint32_t(ceil_div(p.seqlen_q, c.block_m) * c.splits),
                 std::uint32_t(p.heads_q), std::uint32_t(p.batch)};
  }
  plan.block = {std::uint32_t(c.num_threads()), 1, 1};
  plan.smem_bytes = std::uint32_t(smem_bytes(p, c));
  return plan;
}

LaunchPlan plan_split_combine(const AttentionProblem& problem, const AttentionConfig& c) {
  const AttentionProblem p = kernel_problem(problem, c);
  LaunchPlan plan;
  plan.grid = {std::uint32_t(ceil_div(p.batch * p.heads_q * p.seqlen_q, 4)), 1, 1};
  plan.block = {128, 1, 1};
  return plan;
}

std::string attention_kernel_expression(const AttentionProblem& problem, const AttentionConfig& c,
                                        bool write_lse) {
  const AttentionProblem p = kernel_problem(problem, c);
  auto flag = [](bool b) { return b ? "true" : "false"; };
  if (c.family == AttentionFamily::kSm90)
    return fmt::format("kt::attention_fwd_sm90<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}>",
                       device_type_name(p.dtype), p.head_dim, c.block_m, c.block_n, c.stages,
                       flag(c.pingpong), flag(c.splits > 1), flag(p.causal),
                       flag(write_lse && c.splits == 1), flag(c.persistent));
  return fmt::format("kt::attention_fwd_sm80<{}, {}, {}, {}, {}, {}, {}, {}>",
                     device_type_name(p.dtype), p.head_dim, c.block_m, c.block_n, c.warps, c.stages,
                     flag(p.causal), flag(write_lse));
}

std::string split_combine_expression(const AttentionProblem& p) {
  return fmt::format("kt::attention_split_combine<{}, {}>", device_type_name(p.dtype), p.head_dim);
}

std::vector<AttentionConfig> enumerate_attention_configs(const AttentionProblem& p,
                                                         const DeviceDesc& device,
                                                         const AttentionDomains& d) {
  std::vector<AttentionConfig> out;
  auto keep = [&](const AttentionConfig& c) {
    if (!validate(p, c, device)) out.push_back(c);
  };
  auto has = [&](AttentionFamily f) {
    return std::find(d.families.begin(), d.families.end(), f) != d.families.end();
  };
  if (has(AttentionFamily::kSm80))
    for (int bm : d.block_m)
      for (int warps : d.warps)
        for (int bn : d.block_n)
          for (int s : d.stages) keep({bm, bn, warps, s});
  if (has(AttentionFamily::kSm90))
    for (int bm : d.fa3_block_m)
      for (int bn : d.fa3_block_n)
        for (int s : d.fa3_stages)
          for (bool pp : d.fa3_pingpong)
            for (bool pack : {false, true})
              for (int splits : d.fa3_splits)
                for (bool persistent : d.fa3_persistent)
                  keep({bm, bn, 0, s, AttentionFamily::kSm90, pp, pack, splits, persistent});
  return out;
}

int persistent_causal_section(const AttentionProblem& p, const AttentionConfig& c,
                              std::int64_t grid) {
  const int bound = attention_l2_section(p);
  if (!p.causal || p.varlen) return bound;
  // Every CTA works the floor or the ceiling of tiles / grid tiles under any section, so the
  // tiles' fixed costs do not tell the sections apart: key blocks alone rank them.
  const std::vector<AttentionProblem> one(1, p);
  int best = bound;
  double least = std::numeric_limits<double>::infinity();
  for (int section = bound; section >= 1; section /= 2) {
    const std::optional<PersistentGrid> g = persistent_grid_s(p, one, c, grid, section, 1, 0);
    if (!g) return bound;
    if (g->busiest_s < least) {
      best = section;
      least = g->busiest_s;
    }
  }
  return best;
}

AttentionEstimate estimate(const AttentionProblem& problem, const AttentionConfig& c,
                           const DeviceDesc& d, int regs) {
  const AttentionProblem p = kernel_problem(problem, c);
  AttentionEstimate e;
  // The sequences of the batch (a packed one's synthetic lengths), each a query block loop.
  std::vector<AttentionProblem> sequences(1, p);
  if (p.varlen) {
    const auto lq = varlen_lengths(p, false), lk = varlen_lengths(p, true);
    sequences.assign(lq.size(), p);
    for (std::size_t i = 0; i < lq.size(); ++i) {
      sequences[i].batch = 1;
      sequences[i].seqlen_q = lq[i];
      sequences[i].seqlen_k = lk[i];
    }
  }
  // CTAs with work (a packed batch's grid also holds the shorter sequences' empty ones, which
  // leave at once).
  e.num_ctas = 0;
  for (const AttentionProblem& s : sequences)
    e.num_ctas += ceil_div(s.seqlen_q, c.block_m) * c.splits * s.heads_q * s.batch;
  e.threads = c.num_threads();
  e.regs_per_thread = regs > 0 ? regs : estimated_registers(p, c);
  e.smem_bytes = smem_bytes(p, c);
  e.occupancy = occupancy(e.threads, e.regs_per_thread, e.smem_bytes, d);
  // fa3 with two or three consumers: setmaxnreg shares out the registers the CTA was launched
  // with, which the kernel's __launch_bounds__(threads, 1) sizes for one CTA per SM.
  if (c.family == AttentionFamily::kSm90 && c.block_m > 64 && e.occupancy.ctas_per_sm > 1) {
    e.occupancy.ctas_per_sm = 1;
    e.occupancy.limiter = "launch bounds";
  }
  e.waves = wave_stats(e.num_ctas, d.num_sms, e.occupancy.ctas_per_sm);

  // Work the visited blocks cover (masked blocks still cost a full block).
  double covered_pairs = 0, max_cta_blocks = 0;
  for (const AttentionProblem& s : sequences)
    for (std::int64_t qb = 0; qb < ceil_div(s.seqlen_q, c.block_m); ++qb) {
      const std::int64_t blocks = visited_key_blocks(s, c, qb);
      covered_pairs += double(blocks) * c.block_n * c.block_m * working_row_share(s, c, qb) *
                       double(s.batch * s.heads_q);
      max_cta_blocks = std::max(max_cta_blocks, double(ceil_div(blocks, c.splits)));
    }
  e.block_efficiency = covered_pairs > 0 ? p.visible_pairs() / covered_pairs : 0;

  const double sm_rate = sm_flops_per_s(p, c, d, e.occupancy.ctas_per_sm);
  double block_s = 4.0 * c.block_m * c.block_n * double(p.head_dim) / sm_rate;
  // fa2: every warp reads the block's K and V from shared memory for its own rows, so a FLOP of
  // a warp of 16 rows reads twice the bytes one of 32 (two row tiles) does.
  if (c.family == AttentionFamily::kSm80)
    block_s += kFa2ExposedSmemShare * c.warps * 4.0 * c.block_n * double(p.head_dim) /
               (kSmemBytesPerClockPerSm * d.sm_clock_mhz * 1e6);
  const double covered_blocks = covered_pairs / (double(c.block_m) * c.block_n);
  // Balanced over the SMs and stretched by wave quantization, but never shorter than the
  // longest CTA, which shares its SM with ctas_per_sm - 1 others.
  const double balanced_s =
      covered_blocks * block_s / d.num_sms / std::max(e.waves.efficiency, 0.01);
  const double longest_s = max_cta_blocks * block_s * std::max(1, e.occupancy.ctas_per_sm);
  // The fixed cost of a CTA, paid once per wave of CTAs, or by persistent CTAs once and then a
  // part for each further query block.
  const double fixed_us = c.family == AttentionFamily::kSm90 ? kFa3CtaFixedUs : kFa2CtaFixedUs;
  const int slots = d.num_sms * std::max(1, e.occupancy.ctas_per_sm);
  const double tiles_per_slot = double(e.num_ctas) / double(slots);
  // A persistent CTA shares its SM's rate with ctas_per_sm - 1 others.
  const std::int64_t grid = c.persistent ? persistent_grid(problem, c, slots) : 0;
  if (p.causal && c.splits == 1)
    e.causal_section =
        c.persistent ? persistent_causal_section(p, c, grid) : attention_causal_section(p);
  const double shared_sm_factor =
      c.persistent && e.occupancy.ctas_per_sm > 1 ? kFa3PersistentSharedSmFactor : 1.0;
  const std::optional<PersistentGrid> persistent =
      c.persistent
          ? persistent_grid_s(p, sequences, c, grid, e.causal_section,
                              block_s * std::max(1, e.occupancy.ctas_per_sm) * shared_sm_factor,
                              kFa3PersistentTileUs * 1e-6)
          : std::nullopt;
  if (persistent) {
    e.compute_us = persistent->busiest_s * 1e6 + fixed_us;
    e.persistent_imbalance = persistent->busiest_s / std::max(persistent->mean_s, 1e-12);
  } else
    e.compute_us =
        std::max(balanced_s, longest_s) * shared_sm_factor * 1e6 +
        (c.persistent ? fixed_us + kFa3PersistentTileUs * std::max(0.0, tiles_per_slot - 1)
                      : fixed_us * tiles_per_slot);
  // K/V are re-read by every query block of a head: from L2 mostly; count DRAM once. A grid
  // streaming K/V at the bandwidth loses its last wave's idle slots (decode steps are this
  // bound); a persistent one the time its busiest CTA works past the mean.
  const double stream_efficiency =
      persistent ? 1.0 / std::max(e.persistent_imbalance, 1.0) : e.waves.efficiency;
  e.memory_us = p.min_bytes() / (d.dram_gbps * 1e9) * 1e6 / std::max(stream_efficiency, 0.01);
  // Split-KV: the partials written, then read by the combine kernel, behind a second launch.
  if (c.splits > 1)
    e.combine_us =
        kSplitCombineUs + 2.0 * double(split_workspace_bytes(problem, c)) / (d.dram_gbps * 1e3);
  e.predicted_us = std::max(e.compute_us, e.memory_us) + e.combine_us + kLaunchUs;
  e.predicted_tflops = p.flops() / (e.predicted_us * 1e-6) / 1e12;
  return e;
}

std::vector<RankedAttentionConfig> rank_by_model(const AttentionProblem& p,
                                                 const std::vector<AttentionConfig>& configs,
                                                 const DeviceDesc& d) {
  return rank_by_estimate(configs, [&](const AttentionConfig& c) { return estimate(p, c, d); });
}

}  // namespace kt
