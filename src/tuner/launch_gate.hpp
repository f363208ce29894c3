// A gate that holds a stream until the host opens it: cuStreamWaitValue32 on a word of pinned,
// device-mapped host memory. The measuring protocol closes it before a repetition's start event
// and opens it once the start event, the kernel and the stop event are all enqueued, so the GPU
// runs them back to back: whatever keeps the host thread between those calls (compiles beside
// it, preemption, encoding a tensor map) is never inside the timed interval.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace kt::tune {

class LaunchGate {
 public:
  LaunchGate();  // in the current context; throws CudaError
  ~LaunchGate();
  LaunchGate(const LaunchGate&) = delete;
  LaunchGate& operator=(const LaunchGate&) = delete;

  // Enqueues a wait on `stream` that only open() releases.
  void close(CUstream stream);
  // Releases the last close(); a gate that is open already stays so.
  void open();

 private:
  std::uint32_t* host_ = nullptr;
  CUdeviceptr device_ = 0;
  std::uint32_t epoch_ = 0;
};

}  // namespace kt::tune
