// An attention problem instantiated on the GPU for tuning and tests: fresh random Q, K, V in a
// chosen layout (a varlen problem: packed, its synthetic lengths in cu_seqlens), O and LSE
// poisoned before every run, an FP32 reference on sampled query rows (first, last and random rows
// of random heads), and a count of non-finite values over all of O.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention_params.h"
#include "cache/database.hpp"
#include "core/attention_problem.hpp"
#include "core/device_desc.hpp"
#include "kerntune/kerntune.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/module_cache.hpp"

namespace kt::tune {

enum class AttentionLayout { kBNHD, kBHND };

double attention_tolerance(DType dtype);

class AttentionWorkload {
 public:
  AttentionWorkload(const AttentionProblem& problem, const DeviceDesc& device, cache::Database* db,
                    rt::ModuleCache& modules, CUstream stream, std::uint64_t seed,
                    AttentionLayout layout = AttentionLayout::kBNHD, float softmax_scale = 0);

  // The tensors of this workload; lse set when with_lse.
  AttentionTensors tensors(bool with_lse) const;
  void poison_output();                      // O and LSE = NaN (enqueued)
  OutputCheck check_output(bool check_lse);  // synchronizes, compares with the reference

 private:
  void launch(int kernel, std::uint32_t blocks, void** args, std::uint32_t threads = 256);
  AttentionParams params() const;
  // Packed tensors (total rows by heads, batch strides 0) and cu_seqlens of varlen_lengths.
  void set_packed(AttentionLayout layout);
  std::int64_t seqlen_q_of(std::int64_t batch) const;  // the sequence's query rows
  std::size_t lse_index(int row) const;                // sampled row -> its LSE element

  AttentionProblem problem_;
  CUstream stream_;
  std::int64_t rows_q_, rows_k_;  // Q's and K's rows over the batch
  AttentionTensors tensors_;
  rt::DeviceBuffer cu_seqlens_q_, cu_seqlens_k_;
  std::vector<int> cu_seqlens_q_host_, cu_seqlens_k_host_;
  const rt::LoadedModule* module_ = nullptr;
  rt::DeviceBuffer q_, k_, v_, o_, lse_;
  rt::DeviceBuffer rows_device_, reference_device_, reference_lse_device_, gathered_device_,
      count_device_;
  std::vector<int> rows_;
  std::vector<float> reference_, reference_lse_;
};

}  // namespace kt::tune
