// Occupancy and wave quantization.
#include "core/occupancy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/arith.hpp"

namespace kt {

namespace {

constexpr int kRegAllocUnit = 256;         // registers are allocated per warp in 256s
constexpr int kSmemReservedPerCta = 1024;  // the driver's per-CTA shared-memory reserve

}  // namespace

Occupancy occupancy(int threads, int regs, int smem, const DeviceDesc& d) {
  Occupancy o;
  const int warps = int(ceil_div(threads, 32));
  const int regs_per_warp = int(ceil_div(std::max(regs, 1) * 32, kRegAllocUnit)) * kRegAllocUnit;
  const int by_threads = d.max_threads_per_sm / std::max(threads, 1);
  const int by_regs = d.regs_per_sm / (regs_per_warp * warps);
  const int by_smem = d.smem_per_sm_bytes / (smem + kSmemReservedPerCta);
  o.ctas_per_sm = d.max_ctas_per_sm;
  o.limiter = "CTA slots";
  if (by_threads < o.ctas_per_sm) {
    o.ctas_per_sm = by_threads;
    o.limiter = "threads";
  }
  if (by_regs < o.ctas_per_sm) {
    o.ctas_per_sm = by_regs;
    o.limiter = "registers";
  }
  if (by_smem < o.ctas_per_sm) {
    o.ctas_per_sm = by_smem;
    o.limiter = "shared memory";
  }
  return o;
}

WaveStats wave_stats(std::int64_t num_ctas, int num_sms, int ctas_per_sm) {
  WaveStats w;
  w.num_ctas = num_ctas;
  w.slots = std::int64_t(num_sms) * std::max(ctas_per_sm, 1);
  w.waves = ceil_div(num_ctas, w.slots);
  w.last_wave_ctas = w.waves > 0 ? num_ctas - (w.waves - 1) * w.slots : 0;
  w.efficiency = w.waves > 0 ? double(num_ctas) / double(w.waves * w.slots) : 0.0;
  return w;
}

std::string explain_occupancy(const Occupancy& occupancy, int threads, int regs_per_thread,
                              int smem_bytes, const WaveStats& waves, int num_sms) {
  return fmt::format("  occupancy    {} CTA/SM ({} threads, ~{} regs, {} B smem; limited by {})\n",
                     occupancy.ctas_per_sm, threads, regs_per_thread, smem_bytes,
                     occupancy.limiter) +
         fmt::format(
             "  waves        {} on {} SMs (last wave {} of {} slots), wave efficiency {:.1f}%\n",
             waves.waves, num_sms, waves.last_wave_ctas, waves.slots, 100 * waves.efficiency);
}

std::string explain_occupancy(const LaunchEstimate& launch, int num_sms) {
  return explain_occupancy(launch.occupancy, launch.threads, launch.regs_per_thread,
                           launch.smem_bytes, launch.waves, num_sms);
}

}  // namespace kt
