// The measuring protocol. One event pair per repetition, synchronized each time: the flush
// keeps repetitions independent, so there is no back-to-back launch overlap to preserve. The
// launch gate holds the stream after the flush until the repetition is enqueued.
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

namespace {
constexpr unsigned int kFlushThreads = 512;
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

std::vector<double> Bench::sample(const std::function<CUresult(CUstream)>& launch, int reps) {
  const rt::CudaDriver& d = rt::driver();
  std::vector<double> out;
  out.reserve(reps);
  // Opens the gate however the enqueueing ends, so a failed launch never leaves the stream held.
  struct OpenOnExit {
    LaunchGate& gate;
    ~OpenOnExit() { gate.open(); }
  };
  for (int i = 0; i < reps; ++i) {
    flush();
    {
      const OpenOnExit opener{gate_};
      gate_.close(stream_);
      rt::check(d.event_record(start_.get(), stream_), "cuEventRecord");
      rt::check(launch(stream_), "cuLaunchKernel(candidate)");
      rt::check(d.event_record(stop_.get(), stream_), "cuEventRecord");
    }
    rt::check(d.event_synchronize(stop_.get()), "cuEventSynchronize");
    out.push_back(1000.0 * rt::elapsed_ms(start_, stop_));
  }
  return out;
}

void Bench::remeasure_interleaved(const std::vector<std::function<CUresult(CUstream)>>& launches,
                                  const std::vector<Timing*>& timings, int rounds) {
  std::vector<std::vector<double>> samples(launches.size());
  for (int round = 0; round < rounds; ++round)
    for (std::size_t f = 0; f < launches.size(); ++f) {
      const int reps = std::max(3, timings[f]->num_reps / std::max(rounds, 1));
      auto more = sample(launches[f], reps);
      samples[f].insert(samples[f].end(), more.begin(), more.end());
    }
  for (std::size_t f = 0; f < launches.size(); ++f) *timings[f] = summarize(std::move(samples[f]));
}

Timing Bench::measure(const std::function<CUresult(CUstream)>& launch, const BenchmarkOptions& o) {
  const rt::CudaDriver& d = rt::driver();
  for (int i = 0; i < o.warmup; ++i) rt::check(launch(stream_), "cuLaunchKernel(warm-up)");
  rt::check(d.stream_synchronize(stream_), "cuStreamSynchronize(warm-up)");
  std::vector<double> probe = sample(launch, 3);
  const double probe_us = *std::min_element(probe.begin(), probe.end());
  const int reps =
      std::clamp(int(o.target_ms * 1000.0 / std::max(probe_us, 1.0)), o.min_reps, o.max_reps);
  std::vector<double> samples = sample(launch, reps);
  return summarize(std::move(samples));
}

}  // namespace kt::tune
