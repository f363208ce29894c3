// A GEMM kernel ready to launch: the loaded functions plus everything launch needs, computed
// once (launch plan, parameter block template). launch() allocates nothing.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>

#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "gemm/gemm_params.h"
#include "runtime/module_cache.hpp"

namespace kt::rt {

// Zeroes the flag region at the head of a freshly allocated GEMM workspace of `bytes` (a no-op
// when it is smaller than kGemmFlagRegionBytes, since no split-K config fits it then); blocks
// until done. Call once per allocation, before its first launch.
void clear_gemm_workspace_flags(CUdeviceptr workspace, std::size_t bytes);

class GemmKernel {
 public:
  GemmKernel() = default;
  // `module` holds the main kernel first and, for split-K of the sm80 and small-M families, the
  // reduce kernel second (sm90 split-K reduces in the main kernel). Raises
  // the dynamic shared-memory limit when the plan needs more than 48 KB. An sm90 kernel is
  // planned for the current context's device (its SM count sizes the persistent grid).
  GemmKernel(const GemmProblem& problem, const GemmConfig& config, const LoadedModule& module);

  // Enqueues C = A·B on `stream` (first, for an sm90 config on rows that are not 16-byte
  // aligned, the padded copies in the workspace that its TMA loads read). `workspace` must hold
  // workspace_bytes() when that is > 0, with its flag region zeroed once after allocation
  // (clear_gemm_workspace_flags) and not written by anything but these kernels since; a
  // workspace serves one launch at a time (stream order).
  // Returns the first failing driver result (CUDA_SUCCESS when every launch was accepted).
  CUresult launch(const void* a, const void* b, void* c, void* workspace, CUstream stream) const;

  // The main kernel's parameter block for these operands (sm80; the common part for sm90): the
  // partial sums start kGemmFlagRegionBytes into `workspace`, after its flag region.
  GemmParams make_params(const void* a, const void* b, void* c, void* workspace) const;
  // The sm90 parameter block: make_params plus the tensor maps of A, B and (TMA-store
  // epilogues) C; returns the driver's result of encoding them. For padded operands the maps
  // read the copies in `workspace`, which launch() writes first.
  CUresult make_sm90_params(const void* a, const void* b, void* c, void* workspace,
                            GemmSm90Params& params) const;
  // Enqueues the main kernel alone with a prepared parameter block (GemmParams, or
  // GemmSm90Params for sm90), in its cluster shape: for harnesses that time the bare launch.
  // A block may be launched any number of times (sm90 split-K keeps its launch epoch in the
  // workspace, not in the parameters).
  CUresult launch_main(void* params, CUstream stream) const;

  const GemmProblem& problem() const { return problem_; }
  const GemmConfig& config() const { return config_; }
  const GemmLaunch& plan() const { return plan_; }
  std::int64_t workspace_bytes() const { return plan_.workspace_bytes; }
  CUfunction main_function() const { return main_; }

 private:
  // The main kernel's cuLaunchKernelEx configuration with its cluster attribute (stored in
  // `cluster`, which must outlive the returned config).
  CUlaunchConfig main_launch_config(CUstream stream, CUlaunchAttribute& cluster) const;
  // Clusters of the main kernel that fit on the device at once (cuOccupancyMaxActiveClusters);
  // 0 (logged) when the query fails.
  int max_active_clusters() const;
  // The padded copy of operand 'A' or 'B' the main kernel reads (plan().pads), or none.
  const GemmPaddedOperand* padded(char operand) const;
  // make_sm90_params, or the block of the last call with the same four pointers.
  CUresult sm90_params(const void* a, const void* b, void* c, void* workspace,
                       GemmSm90Params& params) const;

  // The last sm90 parameter block and its pointers: a serving loop's static buffers (or a
  // caching allocator's reused ones) launch without encoding three tensor maps again, most of a
  // call's host cost. A map holds an address, sizes and strides only, so equal pointers give an
  // equal block. Shared by copies of the kernel (the same problem and config); locked, since one
  // kernel serves every thread of a runtime.
  struct Sm90Operands {
    const void* a;
    const void* b;
    void* c;
    void* workspace;
    bool operator==(const Sm90Operands&) const = default;
  };
  struct LastSm90Params {
    std::mutex mutex;
    std::optional<Sm90Operands> operands;
    GemmSm90Params params;
  };

  GemmProblem problem_;
  GemmConfig config_;
  GemmLaunch plan_;
  CUfunction main_ = nullptr;
  CUfunction reduce_ = nullptr;
  CUfunction pad_ = nullptr;
  std::shared_ptr<LastSm90Params> last_sm90_;  // sm90 only
};

}  // namespace kt::rt
