// A GEMM problem instantiated on the GPU for tuning: fresh random inputs, the output poisoned
// before every candidate run, and a float64 reference on sampled outputs (boundary rows and
// columns always included) plus a count of non-finite values over the whole output.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/gemm_problem.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/module_cache.hpp"

namespace kt::tune {

struct OutputCheck {
  bool passed = false;
  double relative_error = 0;      // ||out - ref|| / ||ref|| over the samples
  double tolerance = 0;
  std::uint64_t nonfinite = 0;    // NaN/Inf anywhere in C (poison left = element not written)
  std::string detail;             // why it failed, for the database
};

// ||out - ref|| / ||ref|| bound for an output dtype (inputs are exact in bf16/fp16; the error
// is the output rounding plus FP32 accumulation order).
double gemm_tolerance(DType out_dtype);

class GemmWorkload {
 public:
  // Allocates and fills A and B with uniform [-1, 1] values from `seed`, and computes the
  // reference samples; zeroes the flag region of the split-K workspace (GemmKernel::launch).
  // The check kernels come from `db` or NVRTC.
  GemmWorkload(const GemmProblem& problem, const DeviceDesc& device, cache::Database* db,
               rt::ModuleCache& modules, CUstream stream, std::uint64_t seed,
               std::size_t workspace_bytes);

  const void* a() const { return a_.data(); }
  const void* b() const { return b_.data(); }
  void* c() const { return c_.data(); }
  void* workspace() const { return workspace_.data(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }
  int num_samples() const { return int(rows_.size()); }

  void poison_output();   // C = NaN everywhere (enqueued)
  OutputCheck check_output();  // synchronizes, compares with the reference

 private:
  void launch(int kernel, std::uint32_t blocks, void** args);

  GemmProblem problem_;
  CUstream stream_;
  const rt::LoadedModule* module_ = nullptr;
  rt::DeviceBuffer a_, b_, c_, workspace_;
  rt::DeviceBuffer rows_device_, cols_device_, reference_device_, gathered_device_, count_device_;
  std::vector<int> rows_, cols_;
  std::vector<double> reference_;
};

}  // namespace kt::tune
