// Reading a gather kernel's samples back (the float and double instances the workloads use).
#include "tuner/gathered_samples.hpp"

#include "runtime/cuda_driver.hpp"
#include "runtime/host_copy.hpp"

namespace kt::tune {

template <typename T>
GatheredSamples<T> read_gathered(CUstream stream, CUdeviceptr values, std::size_t count,
                                 CUdeviceptr nonfinite) {
  const rt::CudaDriver& d = rt::driver();
  rt::check(d.stream_synchronize(stream), "cuStreamSynchronize(check)");
  GatheredSamples<T> out;
  out.values = rt::copy_to_host<T>(values, count, "cuMemcpyDtoH(gathered)");
  rt::check(d.memcpy_dtoh(&out.nonfinite, nonfinite, sizeof(out.nonfinite)), "cuMemcpyDtoH(count)");
  return out;
}

template GatheredSamples<float> read_gathered<float>(CUstream, CUdeviceptr, std::size_t,
                                                     CUdeviceptr);
template GatheredSamples<double> read_gathered<double>(CUstream, CUdeviceptr, std::size_t,
                                                       CUdeviceptr);

}  // namespace kt::tune
