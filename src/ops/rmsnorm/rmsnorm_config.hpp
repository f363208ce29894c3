// One point of the RMSNorm kernel's space, its validity, launch and the model's time. A row is
// spread over `threads_per_row` threads (one warp or more, or part of one for short rows), each
// loading `vec` elements at a time (a row not starting on a vector boundary has its ends peeled); a
// CTA normalizes `rows_per_cta` rows side by side. The row stays in registers between the sum of
// squares and the scaling (kRegisters), is staged in shared memory (kShared), or is read twice from
// global memory, the second time mostly from L2 (kTwoPass). A persistent registers config runs a
// resident grid whose CTAs loop over the rows, loading the next row while storing this one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_desc.hpp"
#include "core/launch_plan.hpp"
#include "core/occupancy.hpp"
#include "ops/rmsnorm/rmsnorm_problem.hpp"

namespace kt {

enum class RmsnormMode { kRegisters, kShared, kTwoPass };

struct RmsnormConfig {
  int threads_per_row = 128;
  int rows_per_cta = 1;
  int vec = 8;  // elements per load and store (16 bytes at 8 for 2-byte dtypes); any hidden
  RmsnormMode mode = RmsnormMode::kRegisters;
  // A grid of the CTAs resident at once looping over the rows, the next row's loads in flight
  // during this row's reduction and stores (registers mode only; kt::rmsnorm_persistent).
  bool persistent = false;

  bool operator==(const RmsnormConfig&) const = default;
};

// "rms.t128.r1.v8.reg" (modes reg, smem, 2pass), "rms.t256.r1.v8.reg.pers" (persistent).
std::string to_key(const RmsnormConfig& config);
RmsnormConfig parse_rmsnorm_config_key(std::string_view key);  // throws naming the field

// Vector loads each thread issues per row: ceil(⌊hidden / vec⌋ / threads_per_row), at least 1.
int rmsnorm_items(const RmsnormProblem& problem, const RmsnormConfig& config);
// Vectors a thread loads before it uses them: its whole slice (registers), else up to four.
// Persistent configs hold a second slice, the next row's, beside it.
int rmsnorm_batch(const RmsnormProblem& problem, const RmsnormConfig& config);
int rmsnorm_smem_bytes(const RmsnormProblem& problem, const RmsnormConfig& config);
int rmsnorm_estimated_registers(const RmsnormProblem& problem, const RmsnormConfig& config);

// Why `config` cannot serve `problem` on `device`, or nullopt.
std::optional<std::string> validate(const RmsnormProblem& problem, const RmsnormConfig& config,
                                    const DeviceDesc& device);

// Grid ⌈rows / rows_per_cta⌉ CTAs, or for a persistent config at most `resident_ctas` (the CTAs
// the device holds at once; required > 0 then); threads_per_row · rows_per_cta threads.
LaunchPlan plan_launch(const RmsnormProblem& problem, const RmsnormConfig& config,
                       std::int64_t resident_ctas = 0);

// "kt::rmsnorm<kt::bf16, 4096, 128, 1, 8, 0, false>", persistent
// "kt::rmsnorm_persistent<kt::bf16, 4096, 128, 1, 8, false>".
std::string rmsnorm_kernel_expression(const RmsnormProblem& problem, const RmsnormConfig& config);

// Every valid config for `problem` on `device`; the persistent twins of the registers configs
// where the plain grid takes more than one wave.
std::vector<RmsnormConfig> enumerate_rmsnorm_configs(const RmsnormProblem& problem,
                                                     const DeviceDesc& device);

struct RmsnormEstimate {
  double predicted_us = 0;
  double memory_us = 0;   // the bytes at the bandwidth the bytes in flight sustain
  double latency_us = 0;  // a wave's row latency left exposed, and the launch
  double efficiency = 0;  // fraction of the device's bandwidth the config reaches
  int ctas_per_sm = 0;
  double waves = 0;      // CTAs over the SMs' slots, a fraction
  WaveStats grid_waves;  // the same grid in whole waves and its last one
};

// The model: a memory-bound stream. Bandwidth follows the bytes each SM keeps in flight (Little's
// law against the DRAM latency), the wave tail of the grid, and a two-pass config's second read
// from L2; each row costs a load-reduce-store latency that only other resident rows hide.
RmsnormEstimate estimate(const RmsnormProblem& problem, const RmsnormConfig& config,
                         const DeviceDesc& device, int registers = 0);

// The model's reasoning for `kerntune explain`: the layout of a row, the grid, the bytes in
// flight and the predicted time, several lines.
std::string explain_config(const RmsnormProblem& problem, const RmsnormConfig& config,
                           const DeviceDesc& device);

}  // namespace kt
