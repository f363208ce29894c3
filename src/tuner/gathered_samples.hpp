// The host side of a workload's output check: the samples a gather kernel wrote, read back, and
// their relative error against the op's reference.
#pragma once

#include <cuda.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace kt::tune {

template <typename T>
struct GatheredSamples {
  std::vector<T> values;
  unsigned long long nonfinite = 0;  // the gather kernel's count of NaN/Inf outputs
};

// After `stream` finishes: `count` values of T at `values` and the unsigned long long at
// `nonfinite`, copied to the host. Throws kt::CudaError naming the failed call.
template <typename T>
GatheredSamples<T> read_gathered(CUstream stream, CUdeviceptr values, std::size_t count,
                                 CUdeviceptr nonfinite);

// ||got - ref|| / ||ref|| (||got - ref|| when ref is all zeros), summed in double; got and ref
// have the same size.
template <typename T, typename R>
double relative_error(const std::vector<T>& got, const std::vector<R>& ref) {
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double delta = double(got[i]) - double(ref[i]);
    diff2 += delta * delta;
    ref2 += double(ref[i]) * double(ref[i]);
  }
  return ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
}

}  // namespace kt::tune
