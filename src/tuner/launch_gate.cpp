// The launch gate (launch_gate.hpp): a host word the stream waits on, epochs counting up.
#include "tuner/launch_gate.hpp"

#include "runtime/cuda_driver.hpp"

namespace kt::tune {

LaunchGate::LaunchGate() {
  const rt::CudaDriver& d = rt::driver();
  void* host = nullptr;
  rt::check(d.mem_host_alloc(&host, sizeof(std::uint32_t),
                             CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
            "cuMemHostAlloc(launch gate)");
  host_ = static_cast<std::uint32_t*>(host);
  __atomic_store_n(host_, 0u, __ATOMIC_RELEASE);
  const CUresult r = d.mem_host_get_device_pointer(&device_, host, 0);
  if (r != CUDA_SUCCESS) {
    d.mem_free_host(host);
    rt::check(r, "cuMemHostGetDevicePointer(launch gate)");
  }
}

LaunchGate::~LaunchGate() {
  open();  // a stream still waiting must not wait forever
  rt::driver().mem_free_host(host_);
}

void LaunchGate::close(CUstream stream) {
  rt::check(rt::driver().stream_wait_value32(stream, device_, ++epoch_, CU_STREAM_WAIT_VALUE_GEQ),
            "cuStreamWaitValue32(launch gate)");
}

void LaunchGate::open() { __atomic_store_n(host_, epoch_, __ATOMIC_RELEASE); }

}  // namespace kt::tune
