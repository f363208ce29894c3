// Benchmark mode's measurement (RuntimeOptions::benchmark_candidates): a problem's candidate
// kernels launched in turn on the first call's own tensors, each launch between two events on the
// call's stream, and their median times.
#pragma once

#include <cuda.h>

#include <vector>

#include "runtime/op_launcher.hpp"

namespace kt::rt {

// One candidate: its kernel and the workspace it launches with.
struct TimedKernel {
  const OpKernel* kernel = nullptr;
  CUdeviceptr workspace = 0;
};

// Launches every kernel once untimed, then `rounds` times each in turn (round-robin, so clock and
// thermal drift fall on all alike), and returns each one's median time in microseconds, +inf for
// one whose launch failed. Waits for the stream. `call` must be one that each launch computes
// alike (OpKernel::timing_call).
// Throws CudaError when an event call fails.
std::vector<double> median_times_us(const std::vector<TimedKernel>& kernels, const void* call,
                                    CUstream stream, int rounds);

// Whether `stream` is being captured into a graph (then nothing may wait for it); true also when
// the driver cannot say.
bool stream_capturing(CUstream stream);

}  // namespace kt::rt
