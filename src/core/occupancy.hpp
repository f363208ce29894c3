// Occupancy and wave quantization, shared by every op's model: how many CTAs an SM holds, and
// how a grid of CTAs falls into waves over the SMs (the seeds' wave-quantization arithmetic).
#pragma once

#include <cstdint>
#include <string>

#include "core/device_desc.hpp"

namespace kt {

struct Occupancy {
  int ctas_per_sm = 0;
  std::string limiter;  // "threads", "registers", "shared memory" or "CTA slots"
};

// Resident CTAs per SM from threads, registers (allocated per warp in units of 256) and
// shared memory (plus the 1 KB the driver reserves per CTA).
Occupancy occupancy(int threads_per_cta, int regs_per_thread, int smem_bytes_per_cta,
                    const DeviceDesc& device);

struct WaveStats {
  std::int64_t num_ctas = 0;
  std::int64_t slots = 0;  // SMs x CTAs per SM: CTAs one wave can hold
  std::int64_t waves = 0;
  std::int64_t last_wave_ctas = 0;
  double efficiency = 0;  // num_ctas / (waves x slots)
};
WaveStats wave_stats(std::int64_t num_ctas, int num_sms, int ctas_per_sm);

// `kerntune explain`'s occupancy and waves lines, the same for every op's model: the CTAs an SM
// holds and what limits them (one CTA's threads, registers a thread, dynamic shared memory),
// then the grid's waves over `num_sms`. Two lines, each ending in a newline.
std::string explain_occupancy(const Occupancy& occupancy, int threads, int regs_per_thread,
                              int smem_bytes, const WaveStats& waves, int num_sms);

// The launch a model's estimate describes: its CTAs, one CTA's threads, registers a thread and
// dynamic shared memory, the CTAs an SM holds and the grid's waves. The attention estimates
// extend it.
struct LaunchEstimate {
  std::int64_t num_ctas = 0;
  int threads = 0, regs_per_thread = 0, smem_bytes = 0;
  Occupancy occupancy;
  WaveStats waves;
};

// explain_occupancy of `launch`'s fields.
std::string explain_occupancy(const LaunchEstimate& launch, int num_sms);

}  // namespace kt
