// Device-to-host copies of whole arrays, for the harnesses that read results back (references,
// gathered samples); the runtime's hot path copies nothing back.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <vector>

#include "runtime/cuda_driver.hpp"

namespace kt::rt {

// `count` values of T copied from device memory at `from` by cuMemcpyDtoH, which does not wait
// for a non-blocking stream: the caller synchronizes the stream that wrote them first. Throws
// CudaError naming `call`.
template <typename T>
std::vector<T> copy_to_host(CUdeviceptr from, std::size_t count, const char* call) {
  std::vector<T> out(count);
  check(driver().memcpy_dtoh(out.data(), from, count * sizeof(T)), call);
  return out;
}

}  // namespace kt::rt
