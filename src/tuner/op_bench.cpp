// OpBenchRow's ratios and the same-bytes copy.
#include "tuner/op_bench.hpp"

#include <chrono>

#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"

namespace kt::tune {

namespace {

std::size_t copy_half(double min_bytes) { return (std::size_t(min_bytes / 2) + 15) / 16 * 16; }

}  // namespace

OpBenchSetup::OpBenchSetup(const OpBenchOptions& options)
    : device(rt::query_current_device()),
      seed(options.seed != 0
               ? options.seed
               : std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())) {}

double OpBenchRow::ratio() const {
  return kerntune.median_us > 0 && baseline.median_us > 0 ? baseline.median_us / kerntune.median_us
                                                          : 0;
}

double OpBenchRow::of_copy() const {
  return kerntune.median_us > 0 && copy.median_us > 0 ? copy.median_us / kerntune.median_us : 0;
}

SameBytesCopy::SameBytesCopy(double min_bytes, CUstream stream)
    : bytes_(copy_half(min_bytes)), src_(bytes_), dst_(bytes_) {
  // Never time a copy of zeros: a byte pattern that is a finite value in every dtype.
  rt::check(rt::driver().memset_d8_async(src_.get(), 0x3c, bytes_, stream),
            "cuMemsetD8Async(copy source)");
}

CUresult SameBytesCopy::launch(CUstream stream) const {
  return rt::driver().memcpy_dtod_async(dst_.get(), src_.get(), bytes_, stream);
}

}  // namespace kt::tune
