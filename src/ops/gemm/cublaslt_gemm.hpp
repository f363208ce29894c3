// cuBLASLt as the side-by-side baseline of `kerntune bench`, loaded with dlopen (the library is
// a baseline, never a dependency). Row-major C = A·B is issued as column-major Cᵀ = Bᵀ·Aᵀ.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

#include "core/gemm_problem.hpp"

namespace kt::tune {

class CublasLtGemm {
 public:
  // Picks cuBLASLt's heuristic best algorithm for `problem` with `workspace` bytes of scratch.
  // Throws kt::Error (kNotFound) when libcublasLt cannot be loaded, kUnsupported when it offers
  // no algorithm.
  CublasLtGemm(const GemmProblem& problem, void* workspace, std::size_t workspace_bytes);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // Enqueues C = A·B; returns CUDA_SUCCESS or CUDA_ERROR_LAUNCH_FAILED (cuBLAS status in log).
  CUresult launch(const void* a, const void* b, void* c, CUstream stream) const;

  // The heuristic's pick as cuBLASLt's own enum values (cublasLt.h: cublasLtMatmulTile_t,
  // cublasLtMatmulStages_t, cublasLtClusterShape_t, cublasLtReductionScheme_t), e.g.
  // "id=66 tile=24 stages=20 splitk=1 reduction=0 swizzle=0 cluster=2"; "" if not queryable.
  std::string algorithm() const;

  static std::string library_path();  // which file was loaded, or "" when not loadable

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kt::tune
