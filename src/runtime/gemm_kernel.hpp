// A GEMM kernel ready to launch: the loaded functions plus everything launch needs, computed
// once (launch plan, parameter block template). launch() allocates nothing.
#pragma once

#include <cuda.h>

#include "core/gemm_config.hpp"
#include "gemm/gemm_params.h"
#include "core/gemm_problem.hpp"
#include "runtime/module_cache.hpp"

namespace kt::rt {

class GemmKernel {
 public:
  GemmKernel() = default;
  // `module` holds the main kernel first and, for split-K, the reduce kernel second. Raises
  // the dynamic shared-memory limit when the plan needs more than 48 KB. An sm90 kernel is
  // planned for the current context's device (its SM count sizes the persistent grid).
  GemmKernel(const GemmProblem& problem, const GemmConfig& config, const LoadedModule& module);

  // Enqueues C = A·B on `stream`. `workspace` must hold workspace_bytes() when that is > 0.
  // Returns the first failing driver result (CUDA_SUCCESS when both launches were accepted).
  CUresult launch(const void* a, const void* b, void* c, void* workspace, CUstream stream) const;

  // The main kernel's parameter block for these operands (sm80; the common part for sm90).
  GemmParams make_params(const void* a, const void* b, void* c, void* workspace) const;
  // The sm90 parameter block: make_params plus the tensor maps of A, B and (TMA-store
  // epilogues) C; returns the driver's result of encoding them.
  CUresult make_sm90_params(const void* a, const void* b, void* c, void* workspace,
                            GemmSm90Params& params) const;
  // Enqueues the main kernel alone with a prepared parameter block (GemmParams, or
  // GemmSm90Params for sm90), in its cluster shape: for harnesses that time the bare launch.
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

  GemmProblem problem_;
  GemmConfig config_;
  GemmLaunch plan_;
  CUfunction main_ = nullptr;
  CUfunction reduce_ = nullptr;
};

}  // namespace kt::rt
