// Tunes one GEMM problem on one device: enumerate the space, rank by the model, compile the top
// candidates in parallel, verify and measure each on the GPU (or, without one, rank the compiled
// candidates by the model), re-measure the finalists interleaved, store everything. Candidates
// are compiled and run in worker processes (candidate_pipeline.hpp); a killed run resumes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_model.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/candidate_pipeline.hpp"
#include "tuner/progress.hpp"

namespace kt::tune {

struct TuneOptions {
  // Round 1 measures the model's best config of each of this many distinct tile shapes
  // (tile, warp tile, split-K); the local rounds after it sweep the variants (depth, stages,
  // raster) and neighbouring shapes of the best ones.
  int max_candidates = 16;
  int refine_per_shape = 8;
  int finalists = 3;  // re-measured interleaved before the pick
  int finalist_rounds = 4;
  int compile_threads = 0;          // 0: hardware concurrency
  bool predict_only = false;        // rank compiled candidates by the model, never touch a GPU
  DeviceDesc device;                // the profile to predict for (predict_only)
  int device_ordinal = 0;           // the GPU to measure on (otherwise)
  std::vector<GemmConfig> configs;  // explicit candidates; empty: the model's top of the space
  std::uint64_t seed = 0;           // 0: fresh from the clock
  std::string run_id;               // empty: generated
  std::size_t max_workspace_bytes = 64u << 20;
  BenchmarkOptions bench;
  ProgressFn progress;
  IsolationOptions isolation;  // worker time limits, the blocklist override, test faults
};

struct CandidateResult {
  GemmConfig config;
  GemmEstimate estimate;  // with the compiled register count when known
  cache::Status status = cache::Status::kOk;
  std::string detail;
  Timing timing;  // measured candidates only
  double compile_ms = 0;
  bool compiled_from_cache = false;
  int registers = 0;
  int spill_bytes = 0;
};

struct TuneReport {
  GemmProblem problem;
  std::string device_fingerprint;
  std::string run_id;
  bool predicted = false;
  std::vector<CandidateResult> candidates;  // model order
  std::optional<std::size_t> winner;        // index into candidates
  std::optional<std::size_t> runner_up;
  double compile_wall_s = 0;  // wall time of the parallel compile phase
  double measure_wall_s = 0;  // wall time of verification and measurement
  int num_compiled = 0;       // NVRTC actually ran
  int num_cache_hits = 0;
  // Where the measured winner sat in the model's order (0 = the model's first choice).
  int winner_model_rank = -1;
  int num_worker_restarts = 0;  // compile or benchmark workers lost to candidates
  bool resumed = false;         // continued a killed run of the same options
};

// Throws kt::Error only for problems with the problem itself, the database or the device;
// candidates that fail become rows with their status.
TuneReport tune_gemm(const GemmProblem& problem, cache::Database& db, const TuneOptions& options);

}  // namespace kt::tune
