// The tuner's side of the benchmark worker (one per GPU): sends it the problem once, then each
// candidate's cubin, and applies a deadline per candidate. A worker that dies, reports a broken
// CUDA context, or runs past the deadline (then it is killed: timeout) is started afresh and set
// up again for the next candidate; the candidate keeps the reason. Its set-up and requests hold
// the GPU's turn (gpu_turn.hpp), so tuning threads sharing a GPU time one at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/worker_process.hpp"

namespace kt::tune {

struct BenchSetup {
  std::string problem_key;
  int device_ordinal = 0;
  std::uint64_t seed = 0;
  std::size_t workspace_bytes = 0;
  std::string db_path;  // where the worker finds the check kernels (":memory:": compiles them)
  BenchmarkOptions bench;
};

struct TrialOutcome {
  cache::Status status = cache::Status::kOk;
  std::string detail;
  Timing timing;             // kOk
  bool worker_died = false;  // the candidate cost the worker (restarted for the next one)
};

class BenchWorker {
 public:
  // candidate_timeout_s: the least time a candidate gets (loading, verifying and timing it).
  BenchWorker(BenchSetup setup, double candidate_timeout_s);

  // Starts the worker and sets the problem up (context, inputs, reference) unless done: the
  // tuner calls it while the first candidates compile. Throws kt::Error when the worker cannot
  // set the problem up (no candidate's fault).
  void prepare();

  // Verifies and times one candidate; stop_above_us is the early-stop bar (0: none). Its
  // deadline is max(candidate_timeout_s, 50 x the predicted time of every launch the protocol
  // may make and its warm-up). Throws kt::Error only when the worker cannot set the problem up
  // (no candidate's fault).
  TrialOutcome measure(const std::string& config_key, const cache::CubinRecord& cubin,
                       double predicted_us, double stop_above_us);

  // Re-measures finalists interleaved in one request; timings[i] holds finalist i's first pass
  // and, on success, the pooled result. Returns false, leaving timings alone, when it failed.
  bool remeasure(const std::vector<std::string>& config_keys,
                 const std::vector<const cache::CubinRecord*>& cubins,
                 const std::vector<double>& predicted_us, std::vector<Timing*>& timings,
                 int rounds);

  int num_worker_restarts() const { return restarts_; }

 private:
  void ensure_setup();
  double deadline_s(double predicted_us, int launches) const;

  BenchSetup setup_;
  double timeout_s_;
  WorkerProcess process_{"bench"};
  int set_up_start_ = 0;  // the process start the problem was sent to
  int restarts_ = 0;
};

}  // namespace kt::tune
