// Benchmark mode's measurement: candidate kernels timed by events on the call's stream.
#include "runtime/benchmark_timing.hpp"

#include <algorithm>
#include <limits>

#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"

namespace kt::rt {

std::vector<double> median_times_us(const std::vector<TimedKernel>& kernels, const void* call,
                                    CUstream stream, int rounds) {
  const std::size_t n = kernels.size();
  std::vector<bool> failed(n, false);
  for (std::size_t i = 0; i < n; ++i)  // warm-up: instruction caches, TLBs, clocks
    failed[i] = kernels[i].kernel->launch(call, kernels[i].workspace, stream) != CUDA_SUCCESS;
  std::vector<Event> events(2 * n * std::size_t(rounds));
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      if (failed[i]) continue;
      const std::size_t e = 2 * (std::size_t(r) * n + i);
      check(driver().event_record(events[e].get(), stream), "cuEventRecord");
      failed[i] = kernels[i].kernel->launch(call, kernels[i].workspace, stream) != CUDA_SUCCESS;
      check(driver().event_record(events[e + 1].get(), stream), "cuEventRecord");
    }
  check(driver().stream_synchronize(stream), "cuStreamSynchronize(benchmark mode)");
  std::vector<double> medians(n, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n; ++i) {
    if (failed[i]) continue;
    std::vector<double> times;
    for (int r = 0; r < rounds; ++r) {
      const std::size_t e = 2 * (std::size_t(r) * n + i);
      times.push_back(1e3 * double(elapsed_ms(events[e], events[e + 1])));
    }
    std::nth_element(times.begin(), times.begin() + rounds / 2, times.end());
    medians[i] = times[std::size_t(rounds / 2)];
  }
  return medians;
}

bool stream_capturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return driver().stream_is_capturing(stream, &status) != CUDA_SUCCESS ||
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace kt::rt
