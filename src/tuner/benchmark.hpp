// The measuring protocol (kBenchmarkProtocolVersion): warm-up, an L2 flush outside the timed
// region before every repetition (a read of twice L2, so L2 holds no dirty lines the timed
// kernel would write back), CUDA events around the kernel alone and run back to back behind a
// launch gate, median and spread.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/launch_gate.hpp"

namespace kt::tune {

struct Timing {
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  int num_reps = 0;
  std::vector<double> samples_us;
  double spread_pct() const { return median_us > 0 ? 100.0 * (p90_us - p10_us) / median_us : 0; }
};

Timing summarize(std::vector<double> samples_us);

struct BenchmarkOptions {
  int warmup = 2;
  int min_reps = 10;
  int max_reps = 100;
  double target_ms = 150;  // total kernel time to aim for
};

// A launch that runs launch_on_set(stream, set) on operand set 0, 1, .., sets - 1, 0, .. in turn,
// one set per call: the measuring protocol's rotation over copies of the operands
// (GemmWorkload). Pass the result by reference, so that every call advances the same rotation.
std::function<CUresult(CUstream)> rotating_launch(
    int sets, std::function<CUresult(CUstream, int)> launch_on_set);

class Bench {
 public:
  // Compiles (or takes from db, which may be null) and loads the flush kernel into `modules`
  // for the device's architecture; the flush reads 2 x the device's L2.
  Bench(CUstream stream, const DeviceDesc& device, rt::ModuleCache& modules, cache::Database* db);

  // Times `launch` (which enqueues one run on the stream and returns its CUresult).
  // Throws CudaError if a launch or the stream fails.
  Timing measure(const std::function<CUresult(CUstream)>& launch, const BenchmarkOptions& options);
  // Exactly `reps` timed repetitions, no warm-up: for interleaved finalist rounds.
  std::vector<double> sample(const std::function<CUresult(CUstream)>& launch, int reps);

  // Re-measures finalists round-robin (each round samples every finalist once, so clock and
  // thermal drift hit them alike) and replaces their timings with the pooled samples.
  // launches[f] runs finalist f; timings[f] is its timing from the first pass.
  void remeasure_interleaved(const std::vector<std::function<CUresult(CUstream)>>& launches,
                             const std::vector<Timing*>& timings, int rounds);

  CUstream stream() const { return stream_; }

 private:
  void flush();
  CUstream stream_;
  rt::DeviceBuffer flush_buffer_;
  rt::DeviceBuffer flush_sink_;
  CUfunction flush_kernel_ = nullptr;
  unsigned int flush_grid_ = 1;
  rt::Event start_, stop_;
  LaunchGate gate_;
};

}  // namespace kt::tune
