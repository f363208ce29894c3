// An attention backward problem instantiated on the GPU for tuning, `kerntune bench` and tests:
// fresh random Q, K, V, dO in a chosen layout, O and the logsumexp from an FP32 forward of every
// row (the backward's inputs, as the forward would hand them over), dQ, dK, dV and the workspace
// poisoned before every run, and an FP32 reference for sampled query rows (dQ) and key rows (dK,
// dV), with a count of non-finite values over each output.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "ops/attention/attention_workload.hpp"
#include "ops/attention_backward/attention_backward_problem.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/output_check.hpp"

namespace kt::tune {

// The bound on ||out - ref|| / max(||ref||, 1e-4 · sqrt(n)) of each of dQ, dK, dV over their
// samples: the dtype's rounding of the outputs and of P and dS before their products (an FP32
// emulation of the kernel's roundings on random data measured 2.4e-3 for bf16 and 3e-4 for fp16),
// with room. The absolute floor keeps gradients that cancel to zero (one key: dQ = dK = 0)
// from dividing rounding noise by nothing.
double attention_backward_tolerance(DType dtype);

class AttentionBackwardWorkload {
 public:
  AttentionBackwardWorkload(const AttentionBackwardProblem& problem, const DeviceDesc& device,
                            cache::Database* db, rt::ModuleCache& modules, CUstream stream,
                            std::uint64_t seed, AttentionLayout layout = AttentionLayout::kBNHD,
                            float softmax_scale = 0);

  const AttentionBackwardTensors& tensors() const { return tensors_; }
  // The scratch a launch needs (attention_backward_workspace), owned here.
  CUdeviceptr workspace() const { return workspace_.get(); }
  // dQ, dK, dV = NaN and every workspace byte 0xFF (enqueued): a kernel must write every
  // output element and set up its own scratch.
  void poison_output();
  // Synchronizes; each of dQ, dK, dV against its reference, and its non-finite count.
  OutputCheck check_output();
  // dQ, dK, dV as stored, byte for byte (for bitwise comparisons between runs); synchronizes.
  std::vector<std::uint8_t> output_bytes();

 private:
  struct Samples {
    std::vector<int> rows;
    rt::DeviceBuffer rows_device;
  };
  void launch(int kernel, std::uint32_t blocks, void** args, std::uint32_t threads = 128);
  // Gathers `samples` of one output into gathered_ and counts its non-finite values.
  struct Gathered {
    std::vector<float> values;
    unsigned long long nonfinite = 0;
  };
  Gathered gather(const rt::DeviceBuffer& tensor, const std::int64_t (&strides)[3],
                  std::int64_t heads, std::int64_t seqlen, const Samples& samples);

  AttentionBackwardProblem problem_;
  CUstream stream_;
  const rt::LoadedModule* module_ = nullptr;
  rt::DeviceBuffer q_, k_, v_, o_, dout_, lse_, dq_, dk_, dv_, workspace_;
  rt::DeviceBuffer gathered_, count_;
  AttentionBackwardTensors tensors_;
  Samples q_samples_, kv_samples_;
  std::vector<float> reference_dq_, reference_dk_, reference_dv_;
};

}  // namespace kt::tune
