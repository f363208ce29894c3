// The small-M GEMM family: validity, derived sizes, template arguments, space and model.
#include "core/gemm_small_m.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/arith.hpp"

namespace kt {

namespace {

constexpr int kMaxSplitK = 32;
constexpr int kMaxWarps = 16;
constexpr int kMaxAccumulators = 64;  // per thread
constexpr int kMinLoads = 2, kMaxLoads = 16;

// Model constants (fitted to tuning exports; bench/NOTES.md, "The GEMM model and its
// calibration"):
// - the fraction of DRAM bandwidth a streaming kernel reaches at best (its fastest configs at
//   M = 1);
// - the bytes in flight per SM it takes to get there (Little's law: DRAM rate x loaded latency
//   over the SMs);
// - the fraction of the mma.sync rate the fragment mapping sustains (byte permutes for nn,
//   fragment copies, the loads' issue slots): fitted at M = 16-64 and nt, taken for M < 16
//   (memory-bound there either way) and for nn, unmeasured;
// - the launch.
constexpr double kStreamEfficiency = 0.85;
constexpr double kInflightBytesPerSm = 40.0 * 1024;
constexpr double kMmaEfficiency = 0.18;
constexpr double kLaunchUs = 2.5;
// Batches of B loads a warp keeps in flight: two register buffers used in turn.
constexpr int kBatchesInFlight = 2;

bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// The smallest power of two >= v and >= floor.
std::int64_t padded(std::int64_t v, std::int64_t floor) {
  std::int64_t r = floor;
  while (r < v) r *= 2;
  return r;
}

}  // namespace

GemmConfig small_m_config(int tile_m, int tile_n, int batch_k, int warp_n, int warps_k,
                          int split_k) {
  GemmConfig c;
  c.family = GemmFamily::kSmallM;
  c.tile_m = tile_m;
  c.tile_n = tile_n;
  c.tile_k = batch_k;
  c.warp_m = 0;
  c.warp_n = warp_n;
  c.stages = 0;
  c.raster_group = 1;
  c.split_k = split_k;
  c.consumers = 0;
  c.warps_k = warps_k;
  return c;
}

int small_m_loads_per_thread(const GemmConfig& c) { return c.warp_n * c.tile_k / 256; }

int small_m_smem_bytes(const GemmConfig& c) {
  return std::max(c.warps_k - 1, 0) * c.tile_m * c.tile_n * 4;
}

int small_m_estimated_registers(const GemmConfig& c) {
  const int accumulators = c.warp_n * c.tile_m / 32;
  const int b_words = 4 * small_m_loads_per_thread(c);
  // A words of up to two 32-element K chunks (nt; nn needs half): ptxas hoists the next chunk's
  // loads. Against ptxas on sm_90a (two unrolled batches): within ~5% for most configs, up to
  // ~20% over for 16-column warps with 256-deep batches and ~20% under for tile_m 64.
  const int chunks = std::max(1, std::min(2, c.tile_k / 32));
  const int a_words = c.tile_m / 2 * chunks;
  return std::min(255, accumulators + 2 * b_words + a_words + 24);
}

std::optional<std::string> validate_small_m(const GemmProblem& p, const GemmConfig& c,
                                            const DeviceDesc& device) {
  if (device.cc_major < 8)
    return fmt::format("the small-M family needs compute capability >= 8.0, device has {}.{}",
                       device.cc_major, device.cc_minor);
  if (p.m > kSmallMMaxM)
    return fmt::format("the small-M family serves M <= {}, not M = {}", kSmallMMaxM, p.m);
  if (c.warp_m != 0 || c.stages != 0 || c.consumers != 0 || c.raster_group != 1 ||
      c.epilogue != 0 || c.cluster != 1 || c.cluster_k != 1 || c.cluster_n != 1 || c.swap_ab)
    return "small-M configs have warp_m = stages = consumers = epilogue = 0, raster_group = 1, "
           "no cluster and no swap-AB";
  if (c.tile_m != 8 && c.tile_m != 16 && c.tile_m != 32 && c.tile_m != 64)
    return "small-M tile_m must be 8, 16, 32 or 64";
  const bool nt = p.layout == Layout::kNT;
  if (nt ? (c.warp_n != 16 && c.warp_n != 32 && c.warp_n != 64) : c.warp_n != 64)
    return nt ? "small-M warp_n must be 16, 32 or 64"
              : "small-M warp_n must be 64 for nn (eight 8-column chunks per warp)";
  if (c.tile_n % c.warp_n != 0 || !is_pow2(c.tile_n / c.warp_n) || c.tile_n / c.warp_n > 8)
    return "small-M tile_n must be 1, 2, 4 or 8 times warp_n";
  if (!is_pow2(c.warps_k) || c.warps_k > 8) return "small-M warps_k must be 1, 2, 4 or 8";
  if (c.num_warps() > kMaxWarps)
    return fmt::format("{} warps per CTA; at most {}", c.num_warps(), kMaxWarps);
  if (!is_pow2(c.tile_k) || c.tile_k < (nt ? 32 : 16) || c.tile_k > 256)
    return nt ? "small-M tile_k (K per warp per batch) must be 32, 64, 128 or 256 for nt"
              : "small-M tile_k (K per warp per batch) must be 16, 32, 64, 128 or 256 for nn";
  const int loads = small_m_loads_per_thread(c);
  if (loads < kMinLoads || loads > kMaxLoads)
    return fmt::format("{} loads of 16 bytes per thread per batch; must be {}..{}", loads,
                       kMinLoads, kMaxLoads);
  if (c.warp_n * c.tile_m / 32 > kMaxAccumulators)
    return fmt::format("warp_n x tile_m needs {} accumulators per thread; at most {}",
                       c.warp_n * c.tile_m / 32, kMaxAccumulators);
  if (small_m_estimated_registers(c) >= 255) return "needs more than 255 registers per thread";
  if (c.split_k < 1 || c.split_k > kMaxSplitK)
    return fmt::format("split_k must be in [1, {}]", kMaxSplitK);
  if (!p.vector_aligned())
    return "the small-M family needs 16-byte rows: K % 8 == 0 (and N % 8 == 0 for nn)";
  return std::nullopt;
}

std::string small_m_kernel_expression(const GemmProblem& p, const GemmConfig& c) {
  return fmt::format("kt::gemm_small_m<{}, {}, {}, {}, {}, {}, {}, {}, {}>",
                     device_type_name(p.in_dtype), device_type_name(p.out_dtype), c.tile_m,
                     c.warp_n, c.tile_n / c.warp_n, c.warps_k, c.tile_k,
                     p.layout == Layout::kNT ? "true" : "false", c.split_k > 1 ? "true" : "false");
}

std::vector<GemmConfig> small_m_candidates(const GemmProblem& p, const GemmDomains& d) {
  std::vector<GemmConfig> out;
  if (p.m > kSmallMMaxM ||
      std::find(d.families.begin(), d.families.end(), GemmFamily::kSmallM) == d.families.end())
    return out;
  const std::int64_t pad_m = padded(p.m, 8);
  const std::int64_t pad_n = padded(p.n, 16);
  for (int bm : d.small_m_tile_m) {
    // A larger tile only pads; a tile under half of M reads B more than twice.
    if (bm > pad_m || 2 * bm < pad_m) continue;
    for (int wn : d.small_m_warp_n)
      for (int warps_n : d.small_m_warps_n) {
        const int bn = wn * warps_n;
        if (bn > 2 * pad_n && warps_n > 1) continue;
        for (int warps_k : d.small_m_warps_k) {
          const int warps = warps_n * warps_k;
          if (warps < 4 || warps > kMaxWarps) continue;
          for (int bk : d.small_m_tile_k) {
            const int loads = wn * bk / 256;
            if (loads < 4 || loads > kMaxLoads) continue;
            for (int sk : d.split_k) {
              const GemmConfig c = small_m_config(bm, bn, bk, wn, warps_k, sk);
              if (sk > 1 && k_per_split(p, c) < std::int64_t(warps_k) * bk) continue;
              out.push_back(c);
            }
          }
        }
      }
  }
  return out;
}

GemmEstimate estimate_small_m(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& d,
                              int regs) {
  GemmEstimate e = estimate_tiles_and_occupancy(p, c, d, regs);
  e.waves = wave_stats(e.num_ctas, d.num_sms, e.occupancy.ctas_per_sm);
  e.mma_efficiency = kMmaEfficiency;

  const double in = size_bytes(p.in_dtype);
  const std::int64_t k_slice = std::min<std::int64_t>(k_per_split(p, c), p.k);
  const double b_bytes = double(p.n) * double(p.k) * in;

  // Memory: each wave of resident CTAs streams its share of the DRAM bytes at the bandwidth
  // its loads in flight sustain (every resident warp keeps two batches of B loads in flight),
  // after one loaded round trip of ramp.
  const double cta_inflight =
      double(kBatchesInFlight) * double(c.num_threads()) * small_m_loads_per_thread(c) * 16.0;
  auto wave_bandwidth = [&](std::int64_t ctas) {
    const double fill =
        std::min(1.0, double(ctas) * cta_inflight / (kInflightBytesPerSm * d.num_sms));
    return kStreamEfficiency * d.dram_gbps * 1e9 * fill;
  };
  // With split-K the main kernel writes FP32 partial sums instead of C (the reduce's traffic is
  // reduce_us).
  const double out_bytes = c.split_k > 1 ? double(splitk_partial_bytes(p, c))
                                         : double(p.m) * double(p.n) * size_bytes(p.out_dtype);
  const double dram_bytes = b_bytes + double(p.m) * double(p.k) * in + out_bytes;
  const double bytes_per_cta = dram_bytes / double(e.num_ctas);
  const std::int64_t full_waves = e.waves.waves - 1;
  double dram_s =
      double(full_waves) * double(e.waves.slots) * bytes_per_cta / wave_bandwidth(e.waves.slots);
  dram_s += double(e.waves.last_wave_ctas) * bytes_per_cta / wave_bandwidth(e.waves.last_wave_ctas);
  // L2: B again for every further M tile, and A by every CTA (its warps along N share it in L1).
  const double l2_bytes =
      double(e.tiles_m) * b_bytes + double(e.num_ctas) * double(c.tile_m) * double(k_slice) * in;
  const double l2_s = l2_bytes / (d.l2_gbps * 1e9);
  e.ramp_us = dram_ramp_us(p, d);
  e.memory_us = std::max(dram_s, l2_s) * 1e6 + e.ramp_us;

  // Compute: padded mma work (16 columns of N by 8 rows of M per fragment) over the SMs that
  // hold CTAs.
  const double padded_flops = 2.0 * double(e.num_ctas) * double(c.tile_n) * double(c.tile_m) *
                              double(ceil_div(k_slice, 16) * 16);
  const double busy_sms = double(std::min<std::int64_t>(e.num_ctas, d.num_sms));
  e.compute_us =
      padded_flops / (d.mma_sync_tflops * 1e12 * kMmaEfficiency * busy_sms / d.num_sms) * 1e6;

  if (c.split_k > 1) {
    const double dram_bw = d.dram_gbps * 1e9;
    const double ws = double(splitk_partial_bytes(p, c));
    e.reduce_us = (ws + double(p.m) * p.n * size_bytes(p.out_dtype)) / dram_bw * 1e6 + kLaunchUs;
  }
  finish_estimate(p, e, kLaunchUs);
  return e;
}

}  // namespace kt
