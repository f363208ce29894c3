// RAII device memory, events and streams.
#include "runtime/device_buffer.hpp"

#include <fmt/format.h>

#include <utility>

#include "core/error.hpp"
#include "runtime/cuda_driver.hpp"

namespace kt::rt {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const CUresult r = driver().mem_alloc(&pointer_, bytes);
  if (r != CUDA_SUCCESS) check(r, fmt::format("cuMemAlloc({} bytes)", bytes).c_str());
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != 0) driver().mem_free(pointer_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_ != 0) driver().mem_free(pointer_);
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Event::Event() { check(driver().event_create(&event_, CU_EVENT_DEFAULT), "cuEventCreate"); }
Event::~Event() {
  if (event_ != nullptr) driver().event_destroy(event_);
}

OwnedStream::OwnedStream() {
  check(driver().stream_create(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}
OwnedStream::~OwnedStream() {
  if (stream_ != nullptr) driver().stream_destroy(stream_);
}

float elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  check(driver().event_elapsed_time(&ms, start.get(), stop.get()), "cuEventElapsedTime");
  return ms;
}

}  // namespace kt::rt
