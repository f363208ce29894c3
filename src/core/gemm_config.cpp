// The GEMM op declaration: config keys, validity, launch plan, template arguments, space.
#include "core/gemm_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "core/arith.hpp"
#include "core/error.hpp"
#include "core/gemm_small_m.hpp"
#include "core/text.hpp"

namespace kt {

namespace {

// The ring of stages (sm80 and sm90): `stages` tiles of A and B, tile_k deep.
std::int64_t ring_bytes(const GemmProblem& p, const GemmConfig& c) {
  return std::int64_t(c.stages) * (c.tile_m + c.tile_n) * c.tile_k * size_bytes(p.in_dtype);
}

// sm90: a consumer thread's FP32 accumulators (BN / 2 for each m64 wgmma tile of its rows).
int sm90_accumulators(const GemmConfig& c) {
  return c.tile_m / std::max(1, c.consumers) / 64 * (c.tile_n / 2);
}

bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

constexpr int kMaxSplitK = 64;
// sm90 cluster split-K: a tile's splits in one cluster, at most the portable cluster size.
constexpr int kMaxClusterSplits = 8;

// sm90: the K depth of a swizzle atom (one 128-byte row; a stage holds 1, 2 or 4), the
// alignment slack the kernel uses to start its stages on 1024-byte boundaries, and the registers
// of a 384-thread CTA at launch (the __launch_bounds__(384, 1) cap, which setmaxnreg splits 40 /
// 232 / 232).
constexpr int kSm90TileK = 64;
constexpr int kSm90SmemAlignBytes = 1024;
constexpr int kSm90TwoConsumerRegs = 168;
// sm90 split-K: the flag words ahead of the ready flags (the launch epoch and the arrival count,
// then padding to a 128-byte line); sm90_flags.cuh's kFlagHeaderWords.
constexpr std::int64_t kSm90FlagHeaderWords = 32;

std::optional<std::string> validate_sm80(const GemmProblem& p, const GemmConfig& c,
                                         const DeviceDesc& device) {
  if (device.cc_major < 8)
    return fmt::format("the sm80 family needs compute capability >= 8.0, device has {}.{}",
                       device.cc_major, device.cc_minor);
  if (!is_pow2(c.tile_m) || c.tile_m < 16 || c.tile_m > 256)
    return "tile_m must be a power of two in [16, 256]";
  if (!is_pow2(c.tile_n) || c.tile_n < 16 || c.tile_n > 256)
    return "tile_n must be a power of two in [16, 256]";
  if (c.tile_k != 32 && c.tile_k != 64) return "tile_k must be 32 or 64";
  if (!is_pow2(c.warp_m) || c.warp_m < 16 || c.warp_m > 64 || c.tile_m % c.warp_m != 0)
    return "warp_m must be 16, 32 or 64 and divide tile_m";
  if (!is_pow2(c.warp_n) || c.warp_n < 16 || c.warp_n > 64 || c.tile_n % c.warp_n != 0)
    return "warp_n must be 16, 32 or 64 and divide tile_n";
  if (c.num_warps() > 8) return fmt::format("{} warps per CTA; at most 8", c.num_warps());
  if (c.stages < 2 || c.stages > 8) return "stages must be in [2, 8]";
  if (c.raster_group < 1 || c.raster_group > 64) return "raster_group must be in [1, 64]";
  if (c.split_k < 1 || c.split_k > kMaxSplitK)
    return fmt::format("split_k must be in [1, {}]", kMaxSplitK);
  if (c.consumers != 0 || c.epilogue != 0 || c.cluster != 1 || c.cluster_k != 1 ||
      c.cluster_n != 1 || c.swap_ab)
    return "sm80 configs have no consumers, epilogue, cluster or swap-AB fields";
  // Every thread copies whole 16-byte chunks of both tiles in each stage.
  const int chunks_a = c.tile_m * c.tile_k / 8, chunks_b = c.tile_n * c.tile_k / 8;
  if (chunks_a % c.num_threads() != 0 || chunks_b % c.num_threads() != 0)
    return fmt::format("{} threads do not divide the 16-byte chunks of a stage ({} of A, {} of B)",
                       c.num_threads(), chunks_a, chunks_b);
  if (p.layout == Layout::kNN && c.tile_n < 64)
    return "the nn layout needs tile_n >= 64 (B rows of 128 bytes for the swizzle)";
  return std::nullopt;
}

std::optional<std::string> validate_sm90(const GemmProblem& p, const GemmConfig& c,
                                         const DeviceDesc& device) {
  if (device.arch() != "sm_90a")
    return fmt::format(
        "the sm90 family needs an sm_90a device (compute capability 9.0), device has {}.{}",
        device.cc_major, device.cc_minor);
  if (c.tile_k != kSm90TileK && c.tile_k != 2 * kSm90TileK && c.tile_k != 4 * kSm90TileK)
    return "sm90 tile_k must be 64 (one swizzle atom a stage), 128 or 256 (two or four)";
  if (c.warp_m != 0 || c.warp_n != 0) return "sm90 configs have no warp tile (warp_m = warp_n = 0)";
  if (c.consumers != 1 && c.consumers != 2) return "sm90 consumers must be 1 or 2";
  if (c.tile_m != 64 * c.consumers && c.tile_m != 128 * c.consumers)
    return "sm90 tile_m must be 64 or 128 rows per consumer warpgroup";
  if (c.tile_n % 64 != 0 || c.tile_n > 256) {
    if (c.tile_n % 8 != 0 || c.tile_n < 16 || c.tile_n > 256)
      return "sm90 tile_n must be a multiple of 8 from 16 to 256";
    if (!kernel_b_k_major(p, c))
      return fmt::format(
          "sm90 tile_n {} needs the nt layout or swap-AB: its B rows are not whole 64-column "
          "atoms",
          c.tile_n);
    // The TMA-store epilogue's slabs are whole 128-byte rows or, for these, two half-tile slabs.
    if (c.epilogue != 0 && c.tile_n != 144 && c.tile_n != 32 && c.tile_n != 16)
      return fmt::format(
          "sm90 tile_n {} stores C directly (e0): the TMA-store epilogue takes 16, 32, 144 or "
          "multiples of 64 columns",
          c.tile_n);
    // A pair along M loads half of B's rows each: whole 8-row swizzle atoms.
    if (c.cluster == 2 && c.tile_n % 16 != 0)
      return fmt::format(
          "sm90 cl2 splits B's {} rows in halves of whole 8-row swizzle atoms: "
          "tile_n must be a multiple of 16",
          c.tile_n);
  }
  if (c.swap_ab) {
    if (c.epilogue != 0) return "sm90 swap-AB (swab) stores C transposed and directly: use e0";
    if (!kernel_a_k_major(p, c) && c.cluster_n != 1)
      return "sm90 swap-AB with nn has no cn2: its A (the caller's B) is M-major, not split in "
             "halves of rows";
  }
  // 144 fit beside a whole-tile epilogue; a split-K or stream-K reduction needs the last 16.
  const int max_accumulators = c.split_k > 1 || c.stream_k ? 128 : 144;
  if (sm90_accumulators(c) > max_accumulators)
    return fmt::format("sm90 tile needs {} accumulators per consumer thread; at most {}{}",
                       sm90_accumulators(c), max_accumulators,
                       max_accumulators == 128 ? " with split-K or stream-K" : "");
  // Deep rings are for small tiles (64 x 32: 12 KB a stage), whose throughput is the bytes in
  // flight per SM over the load latency.
  if (c.stages < 2 || c.stages > 16) return "sm90 stages must be in [2, 16]";
  if (c.raster_group < 1 || c.raster_group > 64) return "raster_group must be in [1, 64]";
  if (c.split_k < 1 || c.split_k > kMaxSplitK)
    return fmt::format("split_k must be in [1, {}]", kMaxSplitK);
  // Rows TMA cannot address (K % 8 != 0, or N % 8 != 0 for nn's B) are read from copies with
  // 16-byte rows (sm90_padded_operands).
  if (c.cluster != 1 && c.cluster != 2) return "sm90 cluster must be 1 or 2";
  if (c.cluster_n != 1) {
    if (c.cluster_n != 2) return "sm90 cn (CTAs along N sharing A) must be 2";
    if (c.cluster != 1 || c.cluster_k != 1)
      return "sm90 cn2 (pairs along N) has no cluster along M or K as well";
  }
  if (c.epilogue < 0 || c.epilogue > 8) return "sm90 epilogue must be in [0, 8] (0: direct stores)";
  // Cluster split-K and stream-K stage an FP32 partial tile over the ring of stages.
  const std::int64_t partials = sm90_partial_tile_bytes(c);
  const std::int64_t ring = ring_bytes(p, c);
  if (c.cluster_k != 1) {
    if (c.cluster_k != c.split_k || c.split_k < 2 || c.split_k > kMaxClusterSplits)
      return fmt::format("sm90 clk{} must equal split_k (sk{}), 2 to {} splits in a cluster",
                         c.cluster_k, c.split_k, kMaxClusterSplits);
    if (c.cluster != 1) return "sm90 clk (splits in a cluster) has no cluster along M as well";
    if (c.epilogue != 0) return "sm90 clk stores each split's stripe of C directly: use e0";
    if (partials > ring)
      return fmt::format(
          "sm90 clk stages the FP32 partial tile ({} B) over the ring of stages "
          "({} B): use more stages",
          partials, ring);
  }
  if (!c.warp_specialized && (c.split_k != 1 || c.stream_k || c.cluster != 1 || c.cluster_n != 1 ||
                              c.cluster_k != 1 || c.swap_ab))
    return "sm90 without warp specialization (nows) has no split-K, stream-K, cluster or swap-AB";
  if (c.stream_k) {
    if (c.split_k != 1 || c.cluster != 1 || c.cluster_n != 1 || c.cluster_k != 1 || c.swap_ab)
      return "sm90 stream-K (st) shares whole tiles' K among CTAs: no split-K, cluster or swap-AB";
    if ((kSm90FlagHeaderWords + std::int64_t(device.num_sms) * c.consumers) * 4 >
        kGemmFlagRegionBytes)
      return fmt::format(
          "sm90 stream-K needs a flag per CTA and consumer; {} SMs do not fit the "
          "workspace's flag region",
          device.num_sms);
    if (partials > ring)
      return fmt::format(
          "sm90 stream-K adds its peers' FP32 partial tiles ({} B) over the ring of "
          "stages ({} B): use more stages",
          partials, ring);
  }
  if (c.split_k > 1 && c.cluster_k == 1 && sm90_splitk_flag_words(p, c) * 4 > kGemmFlagRegionBytes)
    return fmt::format(
        "split-K needs {} flag words for {} tiles x {} splits; the workspace's flag "
        "region holds {}",
        sm90_splitk_flag_words(p, c), tiles_m(p, c) * tiles_n(p, c), c.split_k,
        kGemmFlagRegionBytes / 4);
  if (c.epilogue > 0) {
    if (p.n * size_bytes(p.out_dtype) % 16 != 0)
      return fmt::format(
          "the TMA-store epilogue needs 16-byte row strides of C: N * {} % 16 != 0 "
          "for N = {} (use e0)",
          size_bytes(p.out_dtype), p.n);
    const int slabs = c.tile_n / sm90_slab_columns(p, c);
    if (c.epilogue > slabs)
      return fmt::format("epilogue = {} stages more slabs than the tile has ({} of {} columns)",
                         c.epilogue, slabs, sm90_slab_columns(p, c));
  }
  return std::nullopt;
}

}  // namespace

std::string to_key(const GemmConfig& c) {
  if (c.family == GemmFamily::kSmallM)
    return fmt::format("smallm.bm{}.bn{}.bk{}.wn{}.wk{}.sk{}", c.tile_m, c.tile_n, c.tile_k,
                       c.warp_n, c.warps_k, c.split_k);
  if (c.family == GemmFamily::kSm90)
    return fmt::format("sm90.bm{}.bn{}.bk{}.s{}.c{}.e{}.{}.g{}.sk{}{}", c.tile_m, c.tile_n,
                       c.tile_k, c.stages, c.consumers, c.epilogue,
                       c.cluster_k > 1   ? fmt::format("clk{}", c.cluster_k)
                       : c.cluster_n > 1 ? fmt::format("cn{}", c.cluster_n)
                                         : fmt::format("cl{}", c.cluster),
                       c.raster_group, c.split_k,
                       c.swap_ab             ? ".swab"
                       : c.stream_k          ? ".st"
                       : !c.warp_specialized ? ".nows"
                                             : "");
  return fmt::format("sm80.bm{}.bn{}.bk{}.wm{}.wn{}.s{}.g{}.sk{}", c.tile_m, c.tile_n, c.tile_k,
                     c.warp_m, c.warp_n, c.stages, c.raster_group, c.split_k);
}

GemmConfig parse_gemm_config_key(std::string_view key) {
  const std::vector<std::string_view> parts = split(key, '.');
  const char* hint =
      "expected e.g. sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1, "
      "sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1 or smallm.bm16.bn128.bk64.wn64.wk4.sk1";
  GemmConfig c;
  if (parts.size() == 9 && parts[0] == "sm80") {
    parse_key_fields(key, parts,
                     {{"bm", &c.tile_m},
                      {"bn", &c.tile_n},
                      {"bk", &c.tile_k},
                      {"wm", &c.warp_m},
                      {"wn", &c.warp_n},
                      {"s", &c.stages},
                      {"g", &c.raster_group},
                      {"sk", &c.split_k}},
                     hint);
  } else if ((parts.size() == 10 ||
              (parts.size() == 11 &&
               (parts[10] == "swab" || parts[10] == "st" || parts[10] == "nows"))) &&
             parts[0] == "sm90") {
    c.family = GemmFamily::kSm90;
    c.warp_m = 0;
    c.warp_n = 0;
    c.swap_ab = parts.size() == 11 && parts[10] == "swab";
    c.stream_k = parts.size() == 11 && parts[10] == "st";
    c.warp_specialized = !(parts.size() == 11 && parts[10] == "nows");
    // e0 (direct stores) is a valid value, so the epilogue field is parsed apart from the others.
    const std::string_view e = parts[6];
    if (e.substr(0, 1) != "e")
      throw_invalid(fmt::format("config key '{}': field 6 should start with 'e'; {}", key, hint));
    const std::int64_t slots = parse_int(e.substr(1), "config field 'e'");
    if (slots < 0 || slots > 8)
      throw_invalid(fmt::format("config field 'e' = {} is out of range", slots));
    c.epilogue = int(slots);
    std::vector<std::string_view> rest(parts.begin(), parts.begin() + 10);
    rest.erase(rest.begin() + 6);
    // clkS (a tile's S splits in one cluster) and cnN (N CTAs along N) stand where clN (N CTAs
    // along M) does.
    if (rest[6].substr(0, 3) == "clk") {
      const std::int64_t splits = parse_int(rest[6].substr(3), "config field 'clk'");
      if (splits < 1 || splits > 4096)
        throw_invalid(fmt::format("config field 'clk' = {} is out of range", splits));
      c.cluster_k = int(splits);
      rest[6] = "cl1";
    } else if (rest[6].substr(0, 2) == "cn") {
      const std::int64_t ctas = parse_int(rest[6].substr(2), "config field 'cn'");
      if (ctas < 1 || ctas > 4096)
        throw_invalid(fmt::format("config field 'cn' = {} is out of range", ctas));
      c.cluster_n = int(ctas);
      rest[6] = "cl1";
    }
    parse_key_fields(key, rest,
                     {{"bm", &c.tile_m},
                      {"bn", &c.tile_n},
                      {"bk", &c.tile_k},
                      {"s", &c.stages},
                      {"c", &c.consumers},
                      {"cl", &c.cluster},
                      {"g", &c.raster_group},
                      {"sk", &c.split_k}},
                     hint);
  } else if (parts.size() == 7 && parts[0] == "smallm") {
    c = small_m_config(0, 0, 0, 0, 0);
    parse_key_fields(key, parts,
                     {{"bm", &c.tile_m},
                      {"bn", &c.tile_n},
                      {"bk", &c.tile_k},
                      {"wn", &c.warp_n},
                      {"wk", &c.warps_k},
                      {"sk", &c.split_k}},
                     hint);
  } else {
    throw_invalid(fmt::format("'{}' is not a GEMM config key: {}", key, hint));
  }
  if (to_key(c) != key)
    throw_invalid(
        fmt::format("config key '{}' is not canonical: write it as '{}'", key, to_key(c)));
  return c;
}

GemmProblem oriented_problem(const GemmProblem& p, const GemmConfig& c) {
  if (!c.swap_ab) return p;
  GemmProblem t = p;
  std::swap(t.m, t.n);
  return t;
}

bool kernel_a_k_major(const GemmProblem& p, const GemmConfig& c) {
  return p.layout == Layout::kNT || !c.swap_ab;
}
bool kernel_b_k_major(const GemmProblem& p, const GemmConfig& c) {
  return p.layout == Layout::kNT || c.swap_ab;
}

std::int64_t tiles_m(const GemmProblem& p, const GemmConfig& c) {
  return ceil_div(oriented_problem(p, c).m, c.tile_m);
}
std::int64_t tiles_n(const GemmProblem& p, const GemmConfig& c) {
  return ceil_div(oriented_problem(p, c).n, c.tile_n);
}

std::int64_t k_tiles(const GemmProblem& p, const GemmConfig& c) { return ceil_div(p.k, c.tile_k); }

int smem_bytes(const GemmProblem& p, const GemmConfig& c) {
  if (c.family == GemmFamily::kSmallM) return small_m_smem_bytes(c);
  const int stages_bytes = int(ring_bytes(p, c));
  // sm90 adds the epilogue slabs (epilogue per consumer, a slab row per row of the consumer's
  // rows: epilogue x tile_m x slab row bytes in all), a full and an empty mbarrier per stage,
  // with split-K through L2 a consumer's mbarrier for its stripes (16 bytes: the epoch's lie in
  // the slack), with stream-K that and a consumer's mbarrier for its published partial sums, and
  // the 1024-byte alignment slack.
  if (c.family == GemmFamily::kSm90) {
    const int splitk_barrier_bytes = c.stream_k ? 32 : c.split_k > 1 && c.cluster_k <= 1 ? 16 : 0;
    return stages_bytes +
           c.epilogue * c.tile_m * sm90_slab_columns(p, c) * size_bytes(p.out_dtype) +
           c.stages * 16 + splitk_barrier_bytes + kSm90SmemAlignBytes;
  }
  return stages_bytes;
}

std::int64_t k_per_split(const GemmProblem& p, const GemmConfig& c) {
  return ceil_div(ceil_div(p.k, c.split_k), c.tile_k) * c.tile_k;
}

std::int64_t sm90_partial_tile_bytes(const GemmConfig& c) {
  return std::int64_t(c.tile_m) * c.tile_n * 4;
}

std::int64_t splitk_partial_bytes(const GemmProblem& p, const GemmConfig& c) {
  if (c.split_k <= 1 || c.cluster_k > 1) return 0;
  if (c.family == GemmFamily::kSm90)
    return std::int64_t(c.split_k) * tiles_m(p, c) * tiles_n(p, c) * sm90_partial_tile_bytes(c);
  return std::int64_t(c.split_k) * p.m * p.n * 4;
}

bool sm90_bulk_partials(const GemmProblem& p, const GemmConfig& c) {
  return c.family == GemmFamily::kSm90 && c.split_k > 1 && c.cluster_k <= 1 &&
         sm90_partial_tile_bytes(c) <= ring_bytes(p, c) && sm90_accumulators(c) < 128;
}

namespace {

// The workspace before the padded copies: split-K's or stream-K's flags and partial sums.
std::int64_t reduction_workspace_bytes(const GemmProblem& p, const GemmConfig& c, int num_sms) {
  if (c.stream_k)
    return kGemmFlagRegionBytes + std::int64_t(std::max(num_sms, 1)) * sm90_partial_tile_bytes(c);
  return c.split_k > 1 && c.cluster_k == 1 ? kGemmFlagRegionBytes + splitk_partial_bytes(p, c) : 0;
}

// Past the flag region even without split-K: a workspace serves every kernel of a runtime, and
// the flags must stay as the split-K kernels left them (clear_gemm_workspace_flags).
std::int64_t padding_start(const GemmProblem& p, const GemmConfig& c, int num_sms) {
  return std::max<std::int64_t>(reduction_workspace_bytes(p, c, num_sms), kGemmFlagRegionBytes);
}

std::int64_t aligned_256(std::int64_t bytes) { return ceil_div(bytes, std::int64_t(256)) * 256; }

}  // namespace

std::int64_t GemmPaddedOperand::bytes(const GemmProblem& p) const {
  return rows * dst_ld * size_bytes(p.in_dtype);
}

int sm90_mn_copy_bytes(const GemmProblem& p, const GemmConfig& c) {
  if (c.family != GemmFamily::kSm90 || !c.warp_specialized || c.cluster > 1 || c.cluster_n > 1 ||
      c.cluster_k > 1 || c.stream_k)
    return 0;
  return p.b_row_copy_bytes();
}

std::vector<GemmPaddedOperand> sm90_padded_operands(const GemmProblem& p, const GemmConfig& c,
                                                    int num_sms) {
  std::vector<GemmPaddedOperand> out;
  if (c.family != GemmFamily::kSm90) return out;
  std::int64_t offset = padding_start(p, c, num_sms);
  auto add = [&](char operand, std::int64_t rows, std::int64_t cols) {
    GemmPaddedOperand o;
    o.operand = operand;
    o.rows = rows;
    o.cols = cols;
    o.src_ld = cols;
    o.dst_ld = ceil_div(cols, std::int64_t(8)) * 8;
    o.offset = aligned_256(offset);
    // A warp a row, 8 rows a CTA; the warps stride over the rest.
    constexpr std::int64_t kThreads = 256, kRowsPerCta = kThreads / 32, kMaxCtas = 4096;
    o.launch.grid = {std::uint32_t(std::min(ceil_div(rows, kRowsPerCta), kMaxCtas)), 1, 1};
    o.launch.block = {std::uint32_t(kThreads), 1, 1};
    offset = o.offset + o.bytes(p);
    out.push_back(o);
  };
  if (!p.a_vector_aligned()) add('A', p.m, p.k);  // M x K
  if (!p.b_vector_aligned() && sm90_mn_copy_bytes(p, c) == 0) {
    if (p.layout == Layout::kNT)
      add('B', p.n, p.k);  // N x K
    else
      add('B', p.k, p.n);  // K x N
  }
  return out;
}

std::int64_t workspace_bytes(const GemmProblem& p, const GemmConfig& c, int num_sms) {
  const std::vector<GemmPaddedOperand> pads = sm90_padded_operands(p, c, num_sms);
  if (pads.empty()) return reduction_workspace_bytes(p, c, num_sms);
  return pads.back().offset + pads.back().bytes(p);
}

StreamKRegion stream_k_region(const GemmProblem& p, const GemmConfig& c, std::int64_t ctas) {
  StreamKRegion r;
  const std::int64_t units = work_units(p, c);
  if (!c.stream_k || ctas <= 0 || units % ctas == 0) return r;
  const std::int64_t left = units % ctas;
  r.units = units > ctas && 2 * left < ctas ? left + ctas : left;
  r.iters = ceil_div(r.units * k_tiles(p, c), ctas);
  return r;
}

std::int64_t sm90_splitk_flag_words(const GemmProblem& p, const GemmConfig& c) {
  if (c.family != GemmFamily::kSm90 || c.split_k <= 1 || c.cluster_k > 1) return 0;
  return kSm90FlagHeaderWords +
         std::int64_t(c.split_k - 1) * tiles_m(p, c) * tiles_n(p, c) * std::max(1, c.consumers);
}

int estimated_registers(const GemmConfig& c) {
  if (c.family == GemmFamily::kSmallM) return small_m_estimated_registers(c);
  if (c.family == GemmFamily::kSm90) {
    // Two consumers with a producer: the launch-bounds cap that setmaxnreg redistributes.
    // Otherwise (no setmaxnreg): a consumer's accumulators plus descriptors, barriers and
    // epilogue addressing, and with split-K the reduction's batch of loads, flag polls and
    // addressing (ptxas on sm_90a: 64 x 32 42 -> 115, 64 x 128 90 -> 163 registers).
    if (c.consumers == 2 && c.warp_specialized) return kSm90TwoConsumerRegs;
    return std::min(255, sm90_accumulators(c) + 40 + (c.split_k > 1 ? 72 : 0));
  }
  // Accumulators, two k16 steps of A and B fragments (double-buffered), and addressing; ptxas
  // lands at 242-255 for a 64x64 warp tile and 64 for a 16x16 one.
  const int accumulators = c.warp_m * c.warp_n / 32;
  const int fragments = (c.warp_m / 16) * 4 + (c.warp_n / 8) * 2;
  return std::min(255, accumulators + 2 * fragments + 40);
}

std::optional<std::string> validate(const GemmProblem& p, const GemmConfig& c,
                                    const DeviceDesc& device) {
  if (c.stream_k && c.family != GemmFamily::kSm90) return "stream-K (st) is an sm90 field";
  if (!c.warp_specialized && c.family != GemmFamily::kSm90)
    return "warp specialization off (nows) is an sm90 field";
  if (c.family == GemmFamily::kSm90) {
    if (auto why = validate_sm90(p, c, device)) return why;
  } else if (c.family == GemmFamily::kSmallM) {
    if (auto why = validate_small_m(p, c, device)) return why;
  } else if (c.family != GemmFamily::kSm80) {
    return "unknown template family";
  } else {
    if (auto why = validate_sm80(p, c, device)) return why;
  }
  const int smem = smem_bytes(p, c);
  if (smem > device.max_smem_per_block_optin_bytes)
    return fmt::format("needs {} B of shared memory; the device allows {} B per block", smem,
                       device.max_smem_per_block_optin_bytes);
  if (std::int64_t(estimated_registers(c)) * c.num_threads() > device.regs_per_sm)
    return "register file too small for one CTA";
  if (c.split_k > 1) {
    const std::int64_t kps = k_per_split(p, c);
    if ((c.split_k - 1) * kps >= p.k)
      return fmt::format("split_k = {} leaves the last split empty for K = {}", c.split_k, p.k);
  }
  return std::nullopt;
}

std::int64_t work_units(const GemmProblem& p, const GemmConfig& c) {
  return tiles_m(p, c) * tiles_n(p, c) * c.split_k;
}

std::int64_t cluster_units(const GemmProblem& p, const GemmConfig& c) {
  return ceil_div(tiles_m(p, c), std::max(1, c.cluster)) *
         ceil_div(tiles_n(p, c), std::max(1, c.cluster_n)) * (c.split_k / std::max(1, c.cluster_k));
}

int cluster_size(const GemmConfig& c) {
  return std::max(1, c.cluster) * std::max(1, c.cluster_n) * std::max(1, c.cluster_k);
}

int sm90_slab_columns(const GemmProblem& p, const GemmConfig& c) {
  const int bytes = size_bytes(p.out_dtype);
  return c.tile_n * bytes % 128 == 0 ? 128 / bytes : c.tile_n / 2;
}

bool sm90_slabs_swizzled(const GemmProblem& p, const GemmConfig& c) {
  return sm90_slab_columns(p, c) * size_bytes(p.out_dtype) == 128;
}

GemmLaunch plan_launch(const GemmProblem& p, const GemmConfig& c, int num_sms) {
  GemmLaunch launch;
  const std::int64_t tiles = tiles_m(p, c) * tiles_n(p, c);
  if (c.family == GemmFamily::kSm90) {
    const int size = cluster_size(c);
    const std::int64_t units = cluster_units(p, c);
    const std::int64_t slots = num_sms > 0 ? std::max(1, num_sms / size) : units;
    // Stream-K shares the units' k-tiles out over every SM, whatever their count.
    const std::int64_t clusters = c.stream_k ? slots : std::min<std::int64_t>(units, slots);
    launch.main.grid = {std::uint32_t(clusters * size), 1, 1};
    launch.main.cluster = {std::uint32_t(size), 1, 1};
  } else {
    launch.main.grid = {std::uint32_t(tiles), 1, std::uint32_t(c.split_k)};
  }
  launch.main.block = {std::uint32_t(c.num_threads()), 1, 1};
  launch.main.smem_bytes = std::uint32_t(smem_bytes(p, c));
  launch.workspace_bytes = workspace_bytes(p, c, num_sms);
  launch.pads = sm90_padded_operands(p, c, num_sms);
  // sm90 split-K sums its partial sums inside the main kernel (gemm_sm90.cuh).
  if (c.split_k > 1 && c.family != GemmFamily::kSm90) {
    constexpr std::uint32_t kReduceThreads = 256, kPairsPerThread = 2;
    const std::int64_t pairs = ceil_div(p.m * p.n, 2);
    LaunchPlan reduce;
    reduce.grid = {std::uint32_t(ceil_div(pairs, kReduceThreads * kPairsPerThread)), 1, 1};
    reduce.block = {kReduceThreads, 1, 1};
    launch.reduce = reduce;
  }
  return launch;
}

std::string gemm_kernel_expression(const GemmProblem& p, const GemmConfig& c) {
  const char* nt = p.layout == Layout::kNT ? "true" : "false";
  const char* split = c.split_k > 1 ? "true" : "false";
  if (c.family == GemmFamily::kSmallM) return small_m_kernel_expression(p, c);
  if (c.family == GemmFamily::kSm90)
    return fmt::format(
        "kt::gemm_sm90<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}>",
        device_type_name(p.in_dtype), device_type_name(p.out_dtype), c.tile_m, c.tile_n, c.tile_k,
        c.stages, c.consumers, nt, split, c.epilogue, c.cluster, c.cluster_k,
        c.swap_ab ? "true" : "false", c.cluster_n, c.stream_k ? "true" : "false",
        c.warp_specialized ? "true" : "false", sm90_mn_copy_bytes(p, c));
  return fmt::format(
      "kt::gemm_sm80<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}>", device_type_name(p.in_dtype),
      device_type_name(p.out_dtype), c.tile_m, c.tile_n, c.tile_k, c.warp_m, c.warp_n, c.stages, nt,
      p.a_vector_aligned() ? "true" : "false", p.b_vector_aligned() ? "true" : "false", split);
}

std::string gemm_pad_expression() { return "kt::gemm_pad_rows"; }

std::string gemm_reduce_expression(const GemmProblem& p) {
  return fmt::format("kt::gemm_splitk_reduce<{}>", device_type_name(p.out_dtype));
}

std::vector<int> sm90_fitted_token_tiles(std::int64_t m) {
  constexpr double kMinFill = 0.9;
  std::vector<std::pair<double, int>> fits;  // (fill, width)
  for (std::int64_t tiles = 1; ceil_div(m, tiles) > 56; ++tiles) {
    const int width = int(ceil_div(ceil_div(m, tiles), 8) * 8);
    const double fill = double(m) / double(tiles * width);
    if (width <= 256 && fill >= kMinFill) fits.emplace_back(fill, width);
  }
  std::sort(fits.begin(), fits.end(), std::greater<>());
  std::vector<int> widths;
  for (const auto& [fill, width] : fits)
    if (std::find(widths.begin(), widths.end(), width) == widths.end()) widths.push_back(width);
  return widths;
}

std::vector<GemmConfig> enumerate_gemm_configs(const GemmProblem& p, const DeviceDesc& device,
                                               const GemmDomains& d) {
  std::vector<GemmConfig> out;
  auto padded = [](std::int64_t v) {
    std::int64_t r = 16;
    while (r < v) r *= 2;
    return r;
  };
  auto has = [&](GemmFamily f) {
    return std::find(d.families.begin(), d.families.end(), f) != d.families.end();
  };
  // The nn layout's B rows need tile_n >= 64 whatever N is.
  const std::int64_t min_tile_n = p.layout == Layout::kNN ? 64 : 32;
  auto keep = [&](const GemmConfig& c) {
    if (c.split_k > 1 && k_per_split(p, c) < 4 * c.tile_k) return;
    if (validate(p, c, device)) return;
    out.push_back(c);
  };
  if (has(GemmFamily::kSm80)) {
    std::vector<int> splits = d.split_k;
    if (!p.vector_aligned())
      splits.insert(splits.end(), d.element_split_k.begin(), d.element_split_k.end());
    for (int bm : d.tile_m) {
      if (bm > 2 * padded(p.m) && bm > 16) continue;
      for (int bn : d.tile_n) {
        if (bn > 2 * padded(p.n) && bn > min_tile_n) continue;
        for (int bk : d.tile_k)
          for (int wm : d.warp_m)
            for (int wn : d.warp_n)
              for (int s : d.stages)
                for (int g : d.raster_group)
                  for (int sk : splits)
                    keep(GemmConfig{GemmFamily::kSm80, bm, bn, bk, wm, wn, s, g, sk});
      }
    }
  }
  if (has(GemmFamily::kSm90)) {
    // swap: tiles along the kernel's M and N (oriented_problem), pruned against its sizes.
    auto add_sm90 = [&](const std::vector<int>& tiles_n, const std::vector<int>& epilogues,
                        bool swap) {
      const GemmProblem q = oriented_problem(p, GemmConfig{.swap_ab = swap});
      // Tiles up to this many columns stay whatever N is (a swapped decode step's 16 tokens).
      const int narrowest = swap ? 16 : 64;
      for (int bm : d.sm90_tile_m) {
        if (bm > 2 * padded(q.m) && bm > 64) continue;
        for (int bn : tiles_n) {
          if (bn > 2 * padded(q.n) && bn > narrowest) continue;
          for (int s : d.sm90_stages)
            for (int consumers : d.sm90_consumers)
              for (int e : epilogues)
                for (int cl : d.sm90_cluster) {
                  // A cluster of 2 over a single row of tiles leaves half of its CTAs idle; 16-
                  // and 32-column tiles (decode steps) lose more to the cluster's prologue than
                  // multicast saves them.
                  if (cl > 1 && (ceil_div(q.m, bm) < 2 || bn < 64)) continue;
                  for (int g : d.raster_group)
                    for (int sk : d.split_k) {
                      GemmConfig c{GemmFamily::kSm90, bm, bn, kSm90TileK, 0, 0, s, g, sk,
                                   consumers,         e,  cl};
                      c.swap_ab = swap;
                      keep(c);
                      if (sk == 1 && cl == 1 && !swap) {
                        // The same with stream-K, where the units leave a last wave partly
                        // empty, and without warp specialization.
                        GemmConfig streamed = c;
                        streamed.stream_k = true;
                        if (stream_k_region(p, streamed, device.num_sms).units > 0) keep(streamed);
                        GemmConfig unspecialized = c;
                        unspecialized.warp_specialized = false;
                        keep(unspecialized);
                      }
                      // The same with stages several atoms deep.
                      if (bm + bn <= d.sm90_deep_stage_max_rows)
                        for (int bk : d.sm90_deep_tile_k) {
                          GemmConfig deep = c;
                          deep.tile_k = bk;
                          keep(deep);
                        }
                      // The same with the tile's splits in one cluster (instead of one along M).
                      if (cl == 1 &&
                          std::find(d.sm90_cluster_splits.begin(), d.sm90_cluster_splits.end(),
                                    sk) != d.sm90_cluster_splits.end()) {
                        c.cluster_k = sk;
                        keep(c);
                      }
                    }
                }
        }
      }
    };
    add_sm90(d.sm90_tile_n, d.sm90_epilogue, false);
    if (p.m <= kSm90SwapMaxM) add_sm90(d.sm90_swap_tile_n, {0}, true);
    if (p.m > kSm90SwapMaxM && p.m <= d.sm90_fitted_swap_max_m)
      add_sm90(sm90_fitted_token_tiles(p.m), {0}, true);
  }
  for (const GemmConfig& c : small_m_candidates(p, d))
    if (!validate(p, c, device)) out.push_back(c);
  return out;
}

}  // namespace kt
