// The measuring protocol (kBenchmarkProtocolVersion): a warm-up of at least a few milliseconds,
// an L2 flush outside the timed region before every repetition (a read of twice L2, so L2 holds
// no dirty lines the timed kernel would write back), CUDA events around the kernel alone and run
// back to back behind a launch gate, a repetition count sized by the kernel's duration, median
// and spread; a candidate clearly slower than the best so far stops after its first few
// repetitions.
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
  bool stopped_early = false;  // only the probe was taken: clearly slower than the bar
  std::vector<double> samples_us;
  double spread_pct() const { return median_us > 0 ? 100.0 * (p90_us - p10_us) / median_us : 0; }
};

Timing summarize(std::vector<double> samples_us);

struct BenchmarkOptions {
  int warmup = 1;         // untimed launches at least,
  double warmup_ms = 2;   // and at least this much kernel time (clocks up after an idle GPU)
  int probe_reps = 3;     // timed repetitions before the count is sized and early stop tested
  int min_reps = 5;       // timed repetitions in all, at least (probe included)
  int max_reps = 100;     // and at most
  double target_ms = 25;  // total kernel time to aim for between the two
};

// How many more untimed launches follow a first warm-up launch that took first_us, so that the
// warm-up runs at least options.warmup launches and options.warmup_ms of kernel time (at most
// kMaxWarmupLaunches in all: a kernel of a few microseconds).
inline constexpr int kMaxWarmupLaunches = 1000;
int more_warmup_launches(double first_us, const BenchmarkOptions& options);

// The timed repetitions of a kernel whose fastest probe repetition took probe_us: target_ms of
// kernel time, within [min_reps, max_reps] and never fewer than the probe's. A long kernel's
// samples vary little relative to its time and each costs much; a short one's vary more and
// cost little beside the flush, so the count falls with the duration.
int repetitions_for(double probe_us, const BenchmarkOptions& options);

// The early-stop rule: true when every probe repetition took longer than stop_above_us (> 0).
// The tuner sets the bar at (1 + margin) x the best median measured so far in the run. Were the
// candidate's true median at or below the bar, each repetition would exceed it with probability
// at most 1/2, so all k of them with at most 2^-k (1/8 for three), and far less for a candidate
// that could win (its median at or below the best, a margin below the bar, where spreads are
// 1-5%). The fastest repetition is the test, so a single slow outlier never stops a candidate.
bool clearly_slower(const std::vector<double>& probe_us, double stop_above_us);

// A launch that runs launch_on_set(stream, set) on operand set 0, 1, .., sets - 1, 0, .. in turn,
// one set per call: the measuring protocol's rotation over copies of the operands
// (GemmWorkload). Pass the result by reference, so that every call advances the same rotation.
std::function<CUresult(CUstream)> rotating_launch(
    int sets, std::function<CUresult(CUstream, int)> launch_on_set);

inline constexpr int kMinFinalistRepsPerRound = 5;

class Bench {
 public:
  // Compiles (or takes from db, which may be null) and loads the flush kernel into `modules`
  // for the device's architecture; the flush reads 2 x the device's L2.
  Bench(CUstream stream, const DeviceDesc& device, rt::ModuleCache& modules, cache::Database* db);

  // Times `launch` (which enqueues one run on the stream and returns its CUresult): warm-up,
  // options.probe_reps timed repetitions, then, unless clearly_slower(probe, stop_above_us)
  // (0: never stop), repetitions_for the probe's fastest in all. Throws CudaError if a launch
  // or the stream fails.
  Timing measure(const std::function<CUresult(CUstream)>& launch, const BenchmarkOptions& options,
                 double stop_above_us = 0);
  // Exactly `reps` timed repetitions, no warm-up: for interleaved finalist rounds.
  std::vector<double> sample(const std::function<CUresult(CUstream)>& launch, int reps);

  // Re-measures finalists round-robin (each round samples every finalist once, so clock and
  // thermal drift hit them alike) and replaces their timings with the pooled samples: each
  // round takes max(kMinFinalistRepsPerRound, first-pass repetitions / rounds) of each.
  // launches[f] runs finalist f; timings[f] is its timing from the first pass.
  void remeasure_interleaved(const std::vector<std::function<CUresult(CUstream)>>& launches,
                             const std::vector<Timing*>& timings, int rounds);

  CUstream stream() const { return stream_; }

 private:
  void flush();
  void warm_up(const std::function<CUresult(CUstream)>& launch, const BenchmarkOptions& options);
  // One launch between the events behind the gate, waited for: its time in microseconds.
  double timed_launch_us(const std::function<CUresult(CUstream)>& launch);
  CUstream stream_;
  rt::DeviceBuffer flush_buffer_;
  rt::DeviceBuffer flush_sink_;
  CUfunction flush_kernel_ = nullptr;
  unsigned int flush_grid_ = 1;
  rt::Event start_, stop_;
  LaunchGate gate_;
};

}  // namespace kt::tune
