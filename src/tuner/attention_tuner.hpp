// Tunes one attention-forward problem on one device: every valid config of the (small) space,
// both families on sm_90a (so fa3 is measured whatever the model prefers), is compiled in
// parallel, verified against the reference and timed on the GPU (or, without one, ranked by the
// model); the finalists are re-measured interleaved; everything is stored. The same
// crash-isolated worker path as GEMM (candidate_pipeline.hpp); a killed run resumes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/attention_config.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/candidate_pipeline.hpp"
#include "tuner/progress.hpp"

namespace kt::tune {

struct AttentionTuneOptions {
  int finalists = 3;
  int finalist_rounds = 4;
  int compile_threads = 0;
  bool predict_only = false;
  DeviceDesc device;  // profile when predicting
  int device_ordinal = 0;
  std::vector<AttentionConfig> configs;  // explicit candidates; empty: the whole valid space
  std::uint64_t seed = 0;
  std::string run_id;
  BenchmarkOptions bench;
  ProgressFn progress;
  IsolationOptions isolation;  // worker time limits, the blocklist override, test faults
};

struct AttentionCandidate {
  AttentionConfig config;
  AttentionEstimate estimate;
  cache::Status status = cache::Status::kOk;
  std::string detail;
  Timing timing;
  double compile_ms = 0;
  bool compiled_from_cache = false;
  int registers = 0;
  int spill_bytes = 0;
};

struct AttentionTuneReport {
  AttentionProblem problem;
  std::string device_fingerprint;
  std::string run_id;
  bool predicted = false;
  std::vector<AttentionCandidate> candidates;  // model order
  std::optional<std::size_t> winner;
  std::optional<std::size_t> runner_up;
  double compile_wall_s = 0;
  double measure_wall_s = 0;
  int num_compiled = 0;
  int num_cache_hits = 0;
  int num_worker_restarts = 0;  // compile or benchmark workers lost to candidates
  bool resumed = false;         // continued a killed run of the same options
};

AttentionTuneReport tune_attention(const AttentionProblem& problem, cache::Database& db,
                                   const AttentionTuneOptions& options);

}  // namespace kt::tune
