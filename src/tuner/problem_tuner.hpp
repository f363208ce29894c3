// Tunes one problem of any registered op on one device: the op's search over the model's ranking
// of its valid configs (calibrated by this database's measurements on the device), round by
// round; each round's candidates compiled in parallel in model order while the compiled ones are
// verified against the op's reference and timed on the GPU (or, without one, ranked by the
// model), idle compile threads compiling the search's likely next round ahead; the finalists
// re-measured interleaved; everything stored. Candidates are compiled and run in worker
// processes (candidate_pipeline.hpp, candidate_rounds.hpp); a killed run resumes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_spec.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/candidate_pipeline.hpp"
#include "tuner/progress.hpp"

namespace kt::tune {

enum class SearchMode {
  kDefault,  // the op's search (OpTuning::start_search)
  kWide,     // one round of the model's first max_candidates configs, every valid one when 0:
             // the reference a default search is judged against (bench/tuning_quality.sh)
};

// A candidate whose first repetitions all exceed (1 + this) x the best median so far stops
// there (early_stop_bar_us); the finalists are all fully timed, then re-measured.
inline constexpr double kEarlyStopMargin = 0.05;

struct TuneOptions {
  SearchMode search = SearchMode::kDefault;
  // At most this many candidates over every round of the op's search (0: no cap: the op's whole
  // search); explicit `configs` are not capped.
  int max_candidates = 0;
  int first_round = 24;  // the op's first round (GEMM: tile shapes; the default: the model's top)
  int refine_per_shape = 8;
  int finalists = 3;  // re-measured interleaved before the pick
  int finalist_rounds = 4;
  int compile_threads = 0;           // 0: hardware concurrency
  bool predict_only = false;         // rank compiled candidates by the model, never touch a GPU
  DeviceDesc device;                 // the profile to predict for (predict_only)
  int device_ordinal = 0;            // the GPU to measure on (otherwise)
  std::vector<std::string> configs;  // explicit candidate config keys; empty: the op's search
  std::uint64_t seed = 0;            // 0: fresh from the clock
  std::string run_id;                // empty: generated
  std::size_t max_workspace_bytes = 64u << 20;
  BenchmarkOptions bench;
  double early_stop_margin = kEarlyStopMargin;  // <= 0: every candidate timed fully
  bool calibrate = true;  // scale the model by family factors fitted on this database's rows
  ProgressFn progress;
  IsolationOptions isolation;  // worker time limits, the blocklist override, test faults
};

struct Candidate {
  std::string config_key;
  double predicted_us = 0;  // with the compiled register count when known
  cache::Status status = cache::Status::kOk;
  std::string detail;
  Timing timing;  // measured candidates only
  double compile_ms = 0;
  bool compiled_from_cache = false;
  bool compiled_ahead = false;  // compiled speculatively before its round asked for it
  int registers = 0;
  int spill_bytes = 0;
};

struct TuneReport {
  std::string op;
  std::string problem_key;
  ProblemSummary summary;
  std::string device_fingerprint;
  std::string run_id;
  bool predicted = false;
  std::vector<Candidate> candidates;  // round by round, each round in model order
  std::optional<std::size_t> winner;  // index into candidates
  std::optional<std::size_t> runner_up;
  // Where the time went. Compiling and measuring overlap, so their times add up to more than
  // wall_s; wait_s is the GPU's idle time between them.
  double wall_s = 0;       // the whole tuning of the problem
  PipelineStats pipeline;  // compiling (compile_busy_s), measuring (measure_busy_s), set-up
  double wait_s = 0;       // the measurer waiting for a compile to finish
  int num_compiled = 0;    // candidates whose NVRTC compile this run ran
  int num_cache_hits = 0;
  int num_measured = 0;  // candidates timed on the GPU this run (early stops included)
  int num_stopped_early = 0;
  int num_ahead_used = 0;   // of the compiles started ahead (pipeline.num_speculative), those a
                            // later round asked for
  std::string calibration;  // ModelCalibration::summary(); empty: the model uncalibrated
  // Where the measured winner sat in the model's order of the measured candidates (0 = first).
  int winner_model_rank = -1;
  int num_worker_restarts = 0;  // compile or benchmark workers lost to candidates
  bool resumed = false;         // continued a killed run of the same options
};

// Throws kt::Error only for problems with the problem key itself, the database or the device;
// candidates that fail become rows with their status.
TuneReport tune_problem(const std::string& problem_key, cache::Database& db,
                        const TuneOptions& options);

// A tuning that need not run again: a run of the same tuning key with the same options (the
// options hash a resume compares) marked done, and a winner stored that such a run would not
// replace (a measured one, unless predicting).
struct FinishedTuning {
  cache::TuningRun run;  // the last such run
  cache::Winner winner;
};

// The finished tuning of `problem_key` under `options` in `db`, or nullopt when tune_problem has
// work to do: never tuned, killed before its end (then it resumes), finished without a winner,
// only predicted where measuring, or tuned with other options. Binds the device as tune_problem
// does (its fingerprint is in the key); throws kt::Error as tune_problem does for a bad key.
std::optional<FinishedTuning> find_finished(const std::string& problem_key,
                                            const cache::Database& db, const TuneOptions& options);

}  // namespace kt::tune
