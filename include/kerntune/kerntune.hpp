// kerntune runtime, C++ API: open a tuning database, then launch shape-specialized kernels.
// Dispatch is a lookup (tuned winner -> nearest tuned shape -> model default), never a tune.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"

namespace kt {

using Stream = void*;  // a CUstream (cudaStream_t); nullptr is the legacy default stream

struct RuntimeOptions {
  std::string database_path;           // empty: $KERNTUNE_DB or the user cache directory
  bool read_only = false;              // never write compiled cubins back to the database
  bool compile_on_miss = true;         // false: a shape without a cubin in the DB is an error
  int device_ordinal = 0;              // used when the calling thread has no current context
  std::size_t workspace_bytes = 64u << 20;  // split-K scratch, allocated once at open
};

struct GemmDispatchInfo {
  std::string config_key;              // e.g. "sm80.bm128.bn256.bk32.wm64.wn64.s3.g8.sk1"
  std::string grade;                   // "exact", "nearest-shape" or "model-default"
  std::string tuned_problem_key;       // the tuned shape the config came from, if any
  bool compiled_now = false;           // NVRTC ran (the DB had no cubin)
};

class Runtime {
 public:
  // Binds to the calling thread's current CUDA context (or retains the primary context of
  // options.device_ordinal) and opens the database (created if absent unless read_only; a
  // read-only runtime with no file dispatches from the model). Throws kt::Error.
  static std::unique_ptr<Runtime> open(const RuntimeOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // C[M,N] = A[M,K] · B on `stream` (B is KxN for Layout::kNN, NxK for kNT; all row-major,
  // dense). The first call for a shape resolves and loads its kernel (and may compile); later
  // calls are a hash lookup and a launch. Thread-safe; capturable into CUDA graphs once the
  // shape is prepared. Throws kt::Error naming the bad argument or the failed driver call.
  void gemm(const GemmProblem& problem, const void* a, const void* b, void* c,
            Stream stream = nullptr);

  // Resolves and loads the kernel for `problem` without launching, and says where it came from.
  GemmDispatchInfo prepare_gemm(const GemmProblem& problem);

  // "NVIDIA H200/cc90/132sm": the device part of every tuning key.
  std::string device_fingerprint() const;

  struct Impl;

 private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kt
