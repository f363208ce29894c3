// RMSNorm configs: keys, validity, launch, the space and the model.
#include "ops/rmsnorm/rmsnorm_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/arith.hpp"
#include "core/error.hpp"
#include "core/occupancy.hpp"
#include "core/text.hpp"

namespace kt {

namespace {

constexpr int kMaxRegisters = 255;
constexpr int kSharedBatch = 4;   // vectors in flight a thread in the shared mode
constexpr int kTwoPassBatch = 8;  // and in the two-pass mode's first pass
constexpr std::int64_t kMaxGridX = 2147483647;
// The model's memory constants: a load's round trip under load, the part of a CTA's life spent
// reducing and storing instead of loading, and the launch.
constexpr double kDramLatencyUs = 0.9;
constexpr double kReduceUs = 0.25;
constexpr double kL2LatencyUs = 0.5;
constexpr double kLaunchUs = 2.5;

bool is_pow2_in(int v, int lo, int hi) { return v >= lo && v <= hi && (v & (v - 1)) == 0; }

std::string_view mode_name(RmsnormMode mode) {
  switch (mode) {
    case RmsnormMode::kRegisters:
      return "reg";
    case RmsnormMode::kShared:
      return "smem";
    case RmsnormMode::kTwoPass:
      return "2pass";
  }
  return "?";
}

}  // namespace

std::string to_key(const RmsnormConfig& c) {
  return fmt::format("rms.t{}.r{}.v{}.{}{}", c.threads_per_row, c.rows_per_cta, c.vec,
                     mode_name(c.mode), c.persistent ? ".pers" : "");
}

RmsnormConfig parse_rmsnorm_config_key(std::string_view key) {
  const auto bad = [&](std::string_view why) {
    throw_invalid(
        fmt::format("RMSNorm config key '{}' {}; expected e.g. rms.t128.r1.v8.reg", key, why));
  };
  const std::vector<std::string_view> f = split(key, '.');
  if (f.size() < 5 || f.size() > 6 || f[0] != "rms") bad("is not rms.tT.rR.vV.MODE[.pers]");
  RmsnormConfig c;
  const auto field = [&](std::string_view text, char name, const char* what) {
    if (text.empty() || text[0] != name) bad(fmt::format("has no {} field", what));
    const std::int64_t v = parse_int(text.substr(1), fmt::format("RMSNorm config {}", what));
    if (v < 1 || v > 1024) bad(fmt::format("has {} {} out of range", what, v));
    return int(v);
  };
  c.threads_per_row = field(f[1], 't', "threads per row");
  c.rows_per_cta = field(f[2], 'r', "rows per CTA");
  c.vec = field(f[3], 'v', "vector width");
  if (f[4] == "reg")
    c.mode = RmsnormMode::kRegisters;
  else if (f[4] == "smem")
    c.mode = RmsnormMode::kShared;
  else if (f[4] == "2pass")
    c.mode = RmsnormMode::kTwoPass;
  else
    bad("has a mode other than reg, smem or 2pass");
  if (f.size() == 6) {
    if (f[5] != "pers") bad("has a suffix other than pers");
    c.persistent = true;
  }
  return c;
}

int rmsnorm_items(const RmsnormProblem& p, const RmsnormConfig& c) {
  return int(
      std::max<std::int64_t>(1, ceil_div(p.hidden / c.vec, std::int64_t(c.threads_per_row))));
}

int rmsnorm_smem_bytes(const RmsnormProblem& p, const RmsnormConfig& c) {
  if (c.mode != RmsnormMode::kShared) return 0;
  return int(std::int64_t(c.rows_per_cta) * p.hidden * size_bytes(p.dtype));
}

int rmsnorm_batch(const RmsnormProblem& p, const RmsnormConfig& c) {
  const int items = rmsnorm_items(p, c);
  switch (c.mode) {
    case RmsnormMode::kRegisters:
      return items;
    case RmsnormMode::kShared:
      return std::min(items, kSharedBatch);
    case RmsnormMode::kTwoPass:
      return std::min(items, kTwoPassBatch);
  }
  return items;
}

int rmsnorm_estimated_registers(const RmsnormProblem& p, const RmsnormConfig& c) {
  const int batch = rmsnorm_batch(p, c);
  // Persistent: per element of the slice, half a register each for the row and the next row (x,
  // and r with the residual), one for the weights, which the compiler converts to FP32 once
  // outside the row loop, and one for the row in FP32 between the sum of squares and the scaling.
  if (c.persistent) return 32 + batch * c.vec * (p.residual ? 4 : 3);
  // Per element of a batch, fitted to ptxas 13.0's counts (bench/NOTES.md, "RMSNorm"): the
  // registers mode holds its slice in FP32 from the sum of squares to the scaling, and its
  // weights beside it (about 2); the shared mode holds a batch of x (and r) in 16 bits and
  // converts per vector (1.25 plain, 2.35 with the residual's sum and r); the two-pass mode's
  // first pass keeps only the loads (1 plain, at least 30 in all; 2 with r and the sum).
  const int elements = batch * c.vec;
  switch (c.mode) {
    case RmsnormMode::kRegisters:
      return (p.residual ? 26 : 16) + 2 * elements;
    case RmsnormMode::kShared:
      return p.residual ? 20 + elements * 47 / 20 : 22 + elements * 5 / 4;
    case RmsnormMode::kTwoPass:
      return p.residual ? 12 + 2 * elements : std::max(30, 16 + elements);
  }
  return kMaxRegisters;
}

std::optional<std::string> validate(const RmsnormProblem& p, const RmsnormConfig& c,
                                    const DeviceDesc& device) {
  if (!is_pow2_in(c.threads_per_row, 8, 1024))
    return fmt::format("threads per row {} is not a power of two in 8..1024", c.threads_per_row);
  if (!is_pow2_in(c.rows_per_cta, 1, 32))
    return fmt::format("rows per CTA {} is not a power of two in 1..32", c.rows_per_cta);
  const int threads = c.threads_per_row * c.rows_per_cta;
  if (threads < 32 || threads > 1024)
    return fmt::format("{} threads per CTA is outside 32..1024", threads);
  if (c.persistent && c.mode != RmsnormMode::kRegisters)
    return fmt::format("a persistent grid keeps its rows in registers (mode reg), not mode {}",
                       mode_name(c.mode));
  if (!is_pow2_in(c.vec, 1, 8)) return fmt::format("vector width {} is not 1, 2, 4 or 8", c.vec);
  if (p.hidden < c.vec)
    return fmt::format("rows of {} elements hold no {}-element vector", p.hidden, c.vec);
  if (p.hidden % c.vec != 0 && c.threads_per_row < 2 * (c.vec - 1))
    return fmt::format(
        "rows of {} peeled to {}-element vectors need {} threads a row for their "
        "ends, not {}",
        p.hidden, c.vec, 2 * (c.vec - 1), c.threads_per_row);
  if (c.threads_per_row > 8 && std::int64_t(c.threads_per_row / 2) * c.vec >= p.hidden)
    return fmt::format(
        "{} threads of {} elements leave over half the row's threads idle at "
        "hidden {}",
        c.threads_per_row, c.vec, p.hidden);
  // NOTE: __launch_bounds__(threads) caps a thread's registers at what lets one CTA fit an SM;
  // a config over that cap spills (the tuner would compile it only to reject it).
  const int register_cap = device.regs_per_sm > 0
                               ? std::min(kMaxRegisters, device.regs_per_sm / threads)
                               : kMaxRegisters;
  if (rmsnorm_estimated_registers(p, c) > register_cap)
    return fmt::format(
        "{} vectors per thread (and their weights{}) need ~{} registers, over the {} that {} "
        "threads a CTA leave a thread",
        rmsnorm_batch(p, c), c.persistent ? ", and the next row's" : "",
        rmsnorm_estimated_registers(p, c), register_cap, threads);
  if (c.mode != RmsnormMode::kRegisters && rmsnorm_items(p, c) == 1)
    return "one vector per thread: the row is in registers already";
  if (rmsnorm_smem_bytes(p, c) > device.max_smem_per_block_optin_bytes)
    return fmt::format("{} B of staged rows exceed the {} B of shared memory a CTA can have",
                       rmsnorm_smem_bytes(p, c), device.max_smem_per_block_optin_bytes);
  if (!c.persistent && ceil_div(p.rows, std::int64_t(c.rows_per_cta)) > kMaxGridX)
    return fmt::format("{} rows at {} a CTA need more than 2^31 - 1 CTAs", p.rows, c.rows_per_cta);
  return std::nullopt;
}

LaunchPlan plan_launch(const RmsnormProblem& p, const RmsnormConfig& c,
                       std::int64_t resident_ctas) {
  std::int64_t num_ctas = ceil_div(p.rows, std::int64_t(c.rows_per_cta));
  if (c.persistent) {
    if (resident_ctas <= 0)
      throw Error(ErrorKind::kInternal,
                  fmt::format("{} planned without the device's resident CTAs", to_key(c)));
    num_ctas = std::min(num_ctas, resident_ctas);
  }
  LaunchPlan plan;
  plan.grid = {std::uint32_t(num_ctas), 1, 1};
  plan.block = {std::uint32_t(c.threads_per_row * c.rows_per_cta), 1, 1};
  plan.smem_bytes = std::uint32_t(rmsnorm_smem_bytes(p, c));
  return plan;
}

std::string rmsnorm_kernel_expression(const RmsnormProblem& p, const RmsnormConfig& c) {
  if (c.persistent)
    return fmt::format("kt::rmsnorm_persistent<{}, {}, {}, {}, {}, {}>", device_type_name(p.dtype),
                       p.hidden, c.threads_per_row, c.rows_per_cta, c.vec,
                       p.residual ? "true" : "false");
  return fmt::format("kt::rmsnorm<{}, {}, {}, {}, {}, {}, {}>", device_type_name(p.dtype), p.hidden,
                     c.threads_per_row, c.rows_per_cta, c.vec, int(c.mode),
                     p.residual ? "true" : "false");
}

std::vector<RmsnormConfig> enumerate_rmsnorm_configs(const RmsnormProblem& p,
                                                     const DeviceDesc& device) {
  std::vector<RmsnormConfig> out;
  for (int vec : {8, 4, 2, 1}) {
    for (int tpr = 8; tpr <= 1024; tpr *= 2)
      for (int rpc = 1; rpc <= 32; rpc *= 2)
        for (RmsnormMode mode :
             {RmsnormMode::kRegisters, RmsnormMode::kShared, RmsnormMode::kTwoPass}) {
          const RmsnormConfig c{tpr, rpc, vec, mode};
          if (validate(p, c, device)) continue;
          out.push_back(c);
          // A persistent grid differs from the plain one only where the plain one turns CTAs
          // over: past one wave.
          const RmsnormConfig pers{tpr, rpc, vec, mode, true};
          if (mode == RmsnormMode::kRegisters && estimate(p, c, device).grid_waves.waves > 1 &&
              !validate(p, pers, device))
            out.push_back(pers);
        }
  }
  return out;
}

RmsnormEstimate estimate(const RmsnormProblem& p, const RmsnormConfig& c, const DeviceDesc& device,
                         int registers) {
  RmsnormEstimate e;
  const int threads = c.threads_per_row * c.rows_per_cta;
  const int regs = registers > 0 ? registers : rmsnorm_estimated_registers(p, c);
  const Occupancy occ = occupancy(threads, regs, rmsnorm_smem_bytes(p, c), device);
  e.ctas_per_sm = std::max(1, occ.ctas_per_sm);
  const std::int64_t num_groups = ceil_div(p.rows, std::int64_t(c.rows_per_cta));
  const std::int64_t num_ctas =
      c.persistent
          ? std::min<std::int64_t>(num_groups, std::int64_t(device.num_sms) * e.ctas_per_sm)
          : num_groups;
  e.grid_waves = wave_stats(num_ctas, device.num_sms, e.ctas_per_sm);
  e.waves = double(num_ctas) / double(std::max<std::int64_t>(1, e.grid_waves.slots));

  // Bytes a thread has in flight before it must wait: one batch (its whole slice in registers
  // mode, kSharedBatch or kTwoPassBatch vectors otherwise).
  const int items = rmsnorm_items(p, c);
  const int batch = rmsnorm_batch(p, c);
  const int streams = p.residual ? 2 : 1;
  const double element = size_bytes(p.dtype);
  const double thread_bytes = std::min(double(batch) * c.vec * element * streams,
                                       double(p.hidden) * element * streams / c.threads_per_row);
  const double resident_ctas =
      std::min<double>(double(e.ctas_per_sm) * device.num_sms, double(num_ctas));
  const double in_flight = resident_ctas * threads * thread_bytes;
  const double bytes_per_us = device.dram_gbps * 1e3;
  // Reads are about half the traffic: the loads in flight sustain in_flight / latency of reads.
  const double read_share = 0.5;
  const double sustained = std::min(1.0, in_flight / (kDramLatencyUs * bytes_per_us * read_share));
  // A CTA loads, then reduces and stores: the load pipe idles for that part of its life unless
  // another resident CTA is loading, or (persistent) its own next row is.
  const double phase = e.ctas_per_sm >= 2 || c.persistent ? 1.0 : 0.85;
  e.efficiency = sustained * phase;
  e.memory_us = p.min_bytes() / (bytes_per_us * e.efficiency);
  // The two-pass mode's second read of x comes from L2 and adds no DRAM bytes; L2 serves 1.5x
  // the DRAM traffic at about 2.5x DRAM's rate, so it costs its round trips (below), not time
  // on the stream.
  // A CTA slot is busy for its rows' round trips: a DRAM one per batch of the first pass, an
  // L2 one (the weights; the two-pass mode's second read) per batch of the second, and the
  // reduction. The slots turn over e.waves times.
  const int rounds = (items + batch - 1) / batch;
  const double row_us = rounds * (kDramLatencyUs + kL2LatencyUs) + kReduceUs;
  // Persistent: a CTA's rows follow one another, each one's loads issued during the row before,
  // so only the first row's round trip is exposed and then each row's reduction.
  const double rows_us = c.persistent
                             ? kDramLatencyUs + double(ceil_div(num_groups, num_ctas)) * kReduceUs
                             : row_us * std::max(1.0, e.waves);
  e.latency_us = kLaunchUs;
  e.predicted_us = std::max(e.memory_us, rows_us) + e.latency_us;
  // A peeled row (hidden not a multiple of vec; all but one row in vec) loads its weights one
  // element a lane: kVec loads a vector, each spanning 32 lanes x 2·vec bytes, vec/2 L1
  // wavefronts for vec >= 2. Beyond the 2 a 4-wide vector costs, they queue behind the
  // streaming loads in the L1: 8-wide peeled configs ran 0.6-0.8 of the copy on the H200 where
  // 4-wide ones reached it.
  if (p.hidden % c.vec != 0 && c.vec > 4) {
    const double excess_wavefronts_per_element = (c.vec / 2.0 - 2.0) / 32.0;
    const double elements_per_sm = double(p.rows) * double(p.hidden) / device.num_sms;
    e.predicted_us +=
        elements_per_sm * excess_wavefronts_per_element / double(std::max(1, device.sm_clock_mhz));
  }
  // Where the terms above tie (most configs stream at the bandwidth), what measured fastest
  // breaks the tie, 1% a step: two to eight vectors a thread, a warp or more a row, fewer than
  // 512 threads but in the two-pass mode (whose large CTAs hold ~32 registers a thread, so two
  // fill an SM), one row a CTA for rows of a thousand elements and more.
  const double steps =
      0.5 * std::abs(std::log2(double(items) / 4)) + (c.threads_per_row < 32 ? 1.0 : 0.0) +
      (c.threads_per_row * c.rows_per_cta >= 512 && c.mode != RmsnormMode::kTwoPass ? 1.0 : 0.0) +
      (c.rows_per_cta > 1 && p.hidden >= 1024 ? 0.5 : 0.0) +
      (p.hidden % c.vec != 0 && c.mode == RmsnormMode::kRegisters ? 1.0 : 0.0);
  e.predicted_us *= 1 + 0.01 * steps;
  return e;
}

std::string explain_config(const RmsnormProblem& p, const RmsnormConfig& c,
                           const DeviceDesc& device) {
  const RmsnormEstimate e = estimate(p, c, device);
  const LaunchPlan plan = plan_launch(p, c, e.grid_waves.slots);
  return fmt::format(
      "  rows of {} elements: {} threads a row, {} vectors of {} a thread, {} rows a CTA, row "
      "kept in {}{}\n"
      "  grid {} CTAs of {} threads, {} B shared; {} CTAs an SM resident, {:.2f} waves\n"
      "  memory: {:.1f} MB at {:.0f}% of {:.0f} GB/s (bytes in flight) = {:.1f} us\n"
      "  row latency and launch: {:.1f} us; predicted {:.1f} us ({:.0f} GB/s)\n",
      p.hidden, c.threads_per_row, rmsnorm_items(p, c), c.vec, c.rows_per_cta,
      c.mode == RmsnormMode::kRegisters ? "registers"
      : c.mode == RmsnormMode::kShared  ? "shared memory"
                                        : "L2 (read twice)",
      c.persistent ? ", the grid resident and looping over the rows" : "", plan.grid[0],
      plan.block[0], plan.smem_bytes, e.ctas_per_sm, e.waves, p.min_bytes() / 1e6,
      100 * e.efficiency, device.dram_gbps, e.memory_us, e.latency_us, e.predicted_us,
      p.min_bytes() / e.predicted_us / 1e3);
}

}  // namespace kt
