// The benchmark worker's measuring of candidates (it runs in `kerntune-worker bench`, never in
// the tuning process): load a candidate's cubin, run it once on poisoned output and verify it
// against the reference, then time it with the measuring protocol; re-measure finalists
// interleaved. A failed driver call becomes the candidate's status, and the result says whether
// the CUDA context survived it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/device_buffer.hpp"
#include "tuner/bench_target.hpp"
#include "tuner/benchmark.hpp"

namespace kt::tune {

struct TrialResult {
  cache::Status status = cache::Status::kOk;
  std::string detail;
  Timing timing;                // kOk only
  bool context_broken = false;  // the worker must exit: its context is unusable
};

// The status of a candidate whose driver call failed with `code`: illegal_address for
// CUDA_ERROR_ILLEGAL_ADDRESS, launch_failure for the other errors that poison the context
// (launch failed, assert, illegal instruction, misaligned address, ...) or whenever the context
// is broken, timeout for the driver's own launch timeout, else launch_error.
cache::Status classify_cuda_failure(int code, bool context_broken);

class CandidateBench {
 public:
  // Binds nothing: the caller has made the device's context current.
  CandidateBench(const std::string& problem_key, const DeviceDesc& device, cache::Database* db,
                 std::uint64_t seed, std::size_t workspace_bytes, const BenchmarkOptions& options);

  // Loads, verifies and times a candidate; stop_above_us is Bench::measure's early-stop bar
  // (0: time it fully).
  TrialResult measure(const std::string& config_key, const cache::CubinRecord& cubin,
                      double stop_above_us);
  // Loads a candidate without running it (a finalist measured by an earlier worker process).
  void load(const std::string& config_key, const cache::CubinRecord& cubin);
  // Re-measures already measured candidates round-robin; timings[i] holds candidate i's first
  // pass on entry (its repetition count sets the round size) and the pooled result on return.
  // Throws kt::Error when a run fails.
  void remeasure(const std::vector<std::string>& config_keys, std::vector<Timing>& timings,
                 int rounds);

 private:
  // The candidate's launch as the protocol times it: on the next operand set each call.
  std::function<CUresult(CUstream)> timed_launch(const std::string& config_key);

  rt::ModuleCache modules_;  // before the target and the kernels that use its modules
  rt::OwnedStream stream_;
  std::unique_ptr<BenchTarget> target_;
  Bench bench_;
  BenchmarkOptions options_;
};

}  // namespace kt::tune
