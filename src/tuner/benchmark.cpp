// The measuring protocol. One event pair per repetition, synchronized each time: the flush
// keeps repetitions independent, so there is no back-to-back launch overlap to preserve. The
// launch gate holds the stream after the flush until the repetition is enqueued. The rules that
// size the warm-up and the repetitions and stop a clearly slower candidate are pure functions
// (tests/cpu/tuner_measuring_rules_test.cpp).
#include "tuner/benchmark.hpp"

#include <algorithm>
#include <cmath>

#include "generator/generated_source.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"

namespace kt::tune {

Timing summarize(std::vector<double> samples) {
  Timing t;
  t.num_reps = int(samples.size());
  if (samples.empty()) return t;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  auto quantile = [&sorted](double q) {
    const double pos = q * double(sorted.size() - 1);
    const std::size_t lo = std::size_t(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
  };
  t.median_us = quantile(0.5);
  t.p10_us = quantile(0.1);
  t.p90_us = quantile(0.9);
  t.samples_us = std::move(samples);
  return t;
}

std::function<CUresult(CUstream)> rotating_launch(
    int sets, std::function<CUresult(CUstream, int)> launch_on_set) {
  return [sets = std::max(sets, 1), launch_on_set = std::move(launch_on_set),
          next = 0](CUstream stream) mutable {
    const int set = next;
    next = (next + 1) % sets;
    return launch_on_set(stream, set);
  };
}

int more_warmup_launches(double first_us, const BenchmarkOptions& o) {
  const double wanted_us = o.warmup_ms * 1000.0 - first_us;
  const int by_time = wanted_us > 0 ? int(std::ceil(wanted_us / std::max(first_us, 1.0))) : 0;
  return std::clamp(std::max(o.warmup - 1, by_time), 0, kMaxWarmupLaunches - 1);
}

int repetitions_for(double probe_us, const BenchmarkOptions& o) {
  const double by_time = std::ceil(o.target_ms * 1000.0 / std::max(probe_us, 1.0));
  const int reps = int(std::min(by_time, double(o.max_reps)));
  return std::max({reps, o.min_reps, o.probe_reps});
}

bool clearly_slower(const std::vector<double>& probe_us, double stop_above_us) {
  if (stop_above_us <= 0 || probe_us.empty()) return false;
  return *std::min_element(probe_us.begin(), probe_us.end()) > stop_above_us;
}

namespace {

constexpr unsigned int kFlushThreads = 512;

// Opens the gate however the enqueueing ends, so a failed launch never leaves the stream held.
struct OpenOnExit {
  LaunchGate& gate;
  ~OpenOnExit() { gate.open(); }
};

}  // namespace

Bench::Bench(CUstream stream, const DeviceDesc& device, rt::ModuleCache& modules,
             cache::Database* db)
    : stream_(stream),
      flush_buffer_(std::size_t(2 * device.l2_bytes + 15) / 16 * 16),
      flush_sink_(sizeof(unsigned int)),
      flush_grid_(unsigned(std::max(1, 2 * device.num_sms))) {
  const gen::GeneratedSource source = gen::generate_l2_flush(device.arch());
  rt::CubinResult cubin = rt::get_or_compile(db, source, true, db != nullptr);
  flush_kernel_ =
      rt::load_or_rebuild(modules, cubin, db, source, true, db != nullptr).functions.at(0);
  // Defined contents once (the flush only reads them).
  rt::check(rt::driver().memset_d8_async(flush_buffer_.get(), 0x5a, flush_buffer_.bytes(), stream_),
            "cuMemsetD8Async(L2 flush buffer)");
}

void Bench::flush() {
  CUdeviceptr buf = flush_buffer_.get(), sink = flush_sink_.get();
  long long count = static_cast<long long>(flush_buffer_.bytes() / 16);
  unsigned int never = 0x9e3779b9u;
  void* args[] = {&buf, &count, &never, &sink};
  rt::check(rt::driver().launch_kernel(flush_kernel_, flush_grid_, 1, 1, kFlushThreads, 1, 1, 0,
                                       stream_, args, nullptr),
            "cuLaunchKernel(L2 flush)");
}

double Bench::timed_launch_us(const std::function<CUresult(CUstream)>& launch) {
  const rt::CudaDriver& d = rt::driver();
  {
    const OpenOnExit opener{gate_};
    gate_.close(stream_);
    rt::check(d.event_record(start_.get(), stream_), "cuEventRecord");
    rt::check(launch(stream_), "cuLaunchKernel(candidate)");
    rt::check(d.event_record(stop_.get(), stream_), "cuEventRecord");
  }
  rt::check(d.event_synchronize(stop_.get()), "cuEventSynchronize");
  return 1000.0 * rt::elapsed_ms(start_, stop_);
}

std::vector<double> Bench::sample(const std::function<CUresult(CUstream)>& launch, int reps) {
  std::vector<double> out;
  out.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    flush();
    out.push_back(timed_launch_us(launch));
  }
  return out;
}

void Bench::remeasure_interleaved(const std::vector<std::function<CUresult(CUstream)>>& launches,
                                  const std::vector<Timing*>& timings, int rounds) {
  std::vector<std::vector<double>> samples(launches.size());
  for (int round = 0; round < rounds; ++round)
    for (std::size_t f = 0; f < launches.size(); ++f) {
      const int reps =
          std::max(kMinFinalistRepsPerRound, timings[f]->num_reps / std::max(rounds, 1));
      auto more = sample(launches[f], reps);
      samples[f].insert(samples[f].end(), more.begin(), more.end());
    }
  for (std::size_t f = 0; f < launches.size(); ++f) *timings[f] = summarize(std::move(samples[f]));
}

void Bench::warm_up(const std::function<CUresult(CUstream)>& launch, const BenchmarkOptions& o) {
  // The first launch timed alone sizes the rest (no flush: only its duration matters).
  const int more = more_warmup_launches(timed_launch_us(launch), o);
  for (int i = 0; i < more; ++i) rt::check(launch(stream_), "cuLaunchKernel(warm-up)");
  rt::check(rt::driver().stream_synchronize(stream_), "cuStreamSynchronize(warm-up)");
}

Timing Bench::measure(const std::function<CUresult(CUstream)>& launch, const BenchmarkOptions& o,
                      double stop_above_us) {
  warm_up(launch, o);
  std::vector<double> samples = sample(launch, std::max(o.probe_reps, 1));
  if (clearly_slower(samples, stop_above_us)) {
    Timing t = summarize(std::move(samples));
    t.stopped_early = true;
    return t;
  }
  const double probe_us = *std::min_element(samples.begin(), samples.end());
  const int more = repetitions_for(probe_us, o) - int(samples.size());
  if (more > 0) {
    std::vector<double> rest = sample(launch, more);
    samples.insert(samples.end(), rest.begin(), rest.end());
  }
  return summarize(std::move(samples));
}

}  // namespace kt::tune
