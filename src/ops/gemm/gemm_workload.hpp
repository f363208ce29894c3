// A GEMM problem instantiated on the GPU for tuning: fresh random inputs, the output poisoned
// before every candidate run, and a float64 reference on sampled outputs (boundary rows and
// columns always included) plus a count of non-finite values over the whole output; and further
// copies of the operands, each in its own allocations, for the timing to rotate over.
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
#include "tuner/output_check.hpp"

namespace kt::tune {

// ||out - ref|| / ||ref|| bound for an output dtype (inputs are exact in bf16/fp16; the error
// is the output rounding plus FP32 accumulation order).
double gemm_tolerance(DType out_dtype);

// One copy of a GEMM's operands.
struct GemmOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
};

// How many copies of the operands the measuring protocol rotates over when timing `problem`: 8
// where they fit in 1 GiB, fewer for large problems, at least 1. Where an operand lies in memory
// moves a memory-bound kernel's time by up to ~6% (bench/NOTES.md, "Operands rotated"),
// so a time taken on one placement is one draw; the rotation times the average placement.
int timing_operand_sets(const GemmProblem& problem);

class GemmWorkload {
 public:
  // Allocates and fills A and B with uniform [-1, 1] values from `seed`, and computes the
  // reference samples; zeroes the flag region of the split-K workspace (GemmKernel::launch).
  // `operand_sets` - 1 further copies of A and B (and C, poisoned) get their own allocations.
  // The check kernels come from `db` or NVRTC.
  GemmWorkload(const GemmProblem& problem, const DeviceDesc& device, cache::Database* db,
               rt::ModuleCache& modules, CUstream stream, std::uint64_t seed,
               std::size_t workspace_bytes, int operand_sets = 1);

  // The first set: the one poison_output and check_output see.
  const void* a() const { return a_.data(); }
  const void* b() const { return b_.data(); }
  void* c() const { return c_.data(); }
  int num_operand_sets() const { return 1 + int(copies_.size()); }
  GemmOperands operands(int set) const;  // 0 <= set < num_operand_sets()
  void* workspace() const { return workspace_.data(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }
  int num_samples() const { return int(rows_.size()); }

  void poison_output();        // C = NaN everywhere (enqueued)
  OutputCheck check_output();  // synchronizes, compares with the reference

 private:
  struct OperandCopy {
    rt::DeviceBuffer a, b, c;
  };
  void launch(int kernel, std::uint32_t blocks, void** args);
  void poison(CUdeviceptr c);

  GemmProblem problem_;
  CUstream stream_;
  const rt::LoadedModule* module_ = nullptr;
  rt::DeviceBuffer a_, b_, c_, workspace_;
  std::vector<OperandCopy> copies_;
  rt::DeviceBuffer rows_device_, cols_device_, reference_device_, gathered_device_, count_device_;
  std::vector<int> rows_, cols_;
  std::vector<double> reference_;
};

}  // namespace kt::tune
