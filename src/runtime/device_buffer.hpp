// RAII device memory, events and streams for the tuner and the benchmarks (the runtime's hot path
// allocates nothing; this is for harnesses).
#pragma once

#include <cuda.h>

#include <cstddef>

namespace kt::rt {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);  // throws CudaError naming the size on failure
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr get() const { return pointer_; }
  void* data() const { return reinterpret_cast<void*>(pointer_); }
  std::size_t bytes() const { return bytes_; }

 private:
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return event_; }

 private:
  CUevent event_ = nullptr;
};

// A non-blocking stream owned for a harness's lifetime.
class OwnedStream {
 public:
  OwnedStream();
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  CUstream get() const { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

// Milliseconds between two recorded, completed events.
float elapsed_ms(const Event& start, const Event& stop);

}  // namespace kt::rt
