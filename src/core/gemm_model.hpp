// The analytic model of a GEMM config on a device (the seeds' arithmetic, made executable):
// tile quantization, occupancy, waves and wave efficiency, and a roofline time. The tuner
// ranks with it before compiling; the runtime re-scores tuned configs for untuned shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/model_rank.hpp"
#include "core/occupancy.hpp"

namespace kt {

// A decode step's stream starts one loaded DRAM round trip after its first load, and nothing
// hides that wait (traced: the first stage lands ~1 us after the first TMA load).
inline constexpr double kDramRampUs = 1.0;

struct GemmEstimate {
  std::int64_t tiles_m = 0, tiles_n = 0, num_ctas = 0;
  int threads = 0, regs_per_thread = 0, smem_bytes = 0;
  Occupancy occupancy;
  WaveStats waves;
  double tile_efficiency = 0;  // useful MxN over the MxN the tiles cover
  double mma_efficiency = 0;   // sm80: fraction of the mma rate the warp tile's smem reads
                               // allow; sm90: the warp-specialized main loop's wgmma fraction
  double compute_us = 0;       // padded tiles at the mma (sm80) or wgmma (sm90: at the clock
                               // the power limit allows, sm90_clock_gain) rate, by waves
  double memory_us = 0;        // operand traffic at DRAM/L2 bandwidth, plus ramp_us
  double ramp_us = 0;          // memory-bound problems: the first DRAM round trip (kDramRampUs)
  double reduce_us = 0;        // split-K: sm80 and small-M, the workspace round trip and the
                               // reduce launch; sm90, the last wave's in-kernel reduction
                               // (partial-tile loads) and C store, cluster split-K's exchanges,
                               // stream-K's fix-up: work no operand stream hides
  double pad_us = 0;           // sm90 on unaligned rows: the padded copies and their launches,
                               // before the main kernel (sm90_padded_operands)
  double overlap_us = 0;       // the part of the smaller of compute and memory that does not
                               // hide under the larger
  double launch_us = 0;        // the launch, and sm90's prologue before its first load
  double predicted_us = 0;
  double predicted_tflops = 0;  // useful FLOPs over predicted_us
};

// regs_per_thread: from the compiled kernel when known, 0 to use estimated_registers().
GemmEstimate estimate(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& device,
                      int regs_per_thread = 0);

// What every family's estimate ends with: overlap_us, predicted_us (the larger of compute and
// memory, the overlap, the split-K reduction, the padded copies and launch_us) and
// predicted_tflops.
void finish_estimate(const GemmProblem& p, GemmEstimate& e, double launch_us);

// What every family's estimate starts from: tiles, CTAs (tiles × splits), threads, registers
// (regs_per_thread, else estimated_registers()), shared memory, occupancy and tile efficiency.
GemmEstimate estimate_tiles_and_occupancy(const GemmProblem& p, const GemmConfig& c,
                                          const DeviceDesc& device, int regs_per_thread);

// What every family adds to its memory term for the first DRAM round trip: kDramRampUs where
// the problem is memory-bound (its minimum bytes at DRAM bandwidth outlast its FLOPs at the
// device's fastest tensor-core rate: decode steps, every small-M problem), else 0 (a
// compute-bound problem's kernels have that wait in their fitted main loops and pipeline fill).
double dram_ramp_us(const GemmProblem& p, const DeviceDesc& device);

// sm90: how much faster the SMs' clock runs over `busy_us` of wgmma work than over the long runs
// the model's wgmma efficiencies were fitted on (8192^3): the power limit lets short kernels run
// faster. At least 1; constant up to kSm90ShortRunUs, 1 from kSm90LongRunUs (gemm_model.cpp).
double sm90_clock_gain(double busy_us);

using RankedConfig = Ranked<GemmConfig, GemmEstimate>;
// Each config with its estimate, fastest predicted first (rank_by_estimate).
std::vector<RankedConfig> rank_by_model(const GemmProblem& p,
                                        const std::vector<GemmConfig>& configs,
                                        const DeviceDesc& device);

}  // namespace kt
