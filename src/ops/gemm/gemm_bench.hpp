// `kerntune bench` for GEMM: the kernel the runtime dispatches and cuBLASLt, on the same fresh
// random inputs, both verified, timed interleaved with the same protocol in one process.
#pragma once

#include <cstdint>
#include <string>

#include "kerntune/kerntune.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "tuner/benchmark.hpp"

namespace kt::tune {

struct GemmBenchOptions {
  int rounds = 5;  // interleaved rounds (kerntune, baseline, kerntune, ...)
  int reps_per_round = 10;
  std::uint64_t seed = 0;  // 0: fresh
  bool baseline = true;    // run cuBLASLt beside
};

struct GemmBenchRow {
  GemmProblem problem;
  DispatchInfo dispatch;
  Timing kerntune;
  Timing baseline;  // num_reps == 0 when no baseline ran
  // A device-to-device copy moving the problem's min_bytes (half read, half written), timed by
  // the same protocol: the bandwidth a memory-bound GEMM is held to.
  Timing copy;
  OutputCheck kerntune_check;
  OutputCheck baseline_check;
  std::string baseline_error;
  std::string baseline_algorithm;  // CublasLtGemm::algorithm() of the heuristic's pick
  double kerntune_tflops() const;
  double baseline_tflops() const;
  double ratio() const;    // baseline time / kerntune time (> 1: kerntune is faster)
  double of_copy() const;  // copy time / kerntune time: the fraction of copy bandwidth reached
};

GemmBenchRow bench_gemm(Runtime& runtime, const GemmProblem& problem, const GemmBenchOptions& o);

// Host-side cost of Runtime::gemm on a dispatch hit versus a raw cuLaunchKernel of the same
// kernel with a prebuilt parameter block: medians over batches, in microseconds per call.
struct DispatchOverhead {
  double runtime_us = 0;
  double raw_launch_us = 0;
  double overhead_us() const { return runtime_us - raw_launch_us; }
  std::string config_key;
};
DispatchOverhead measure_dispatch_overhead(Runtime& runtime, const GemmProblem& problem,
                                           const std::string& database_path);

}  // namespace kt::tune
