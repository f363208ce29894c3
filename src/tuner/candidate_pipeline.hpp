// The crash-isolated path every tuner sends its candidates down, whatever the op: compile
// (database, else a compile worker; each config key once per run, a round's or ahead of it),
// verify and time (the benchmark worker, set up while the first candidates compile), re-measure
// the finalists, and record each outcome the moment it is known (RunLedger, so a killed run
// resumes). Kernels that crash the benchmark worker, break its CUDA context or hang on the GPU
// are put on the blocklist of this device; what fails on the host (a compile worker that dies
// or runs out of time, a worker that cannot start, NVRTC missing) never is. Configs are opaque
// here: a candidate is its config key, its generated source and its predicted time. The templates
// at the end run these steps over a tuner's own candidate type; candidate_rounds.hpp runs a
// round of them.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "tuner/bench_worker.hpp"
#include "tuner/candidate_compiler.hpp"
#include "tuner/progress.hpp"
#include "tuner/run_ledger.hpp"

namespace kt::tune {

// The options of crash isolation, the same for every op.
struct IsolationOptions {
  double candidate_timeout_s = 10;  // least time a candidate gets on the GPU before it is killed
  double compile_timeout_s = 600;   // per candidate compile
  bool retry_blocklisted = false;   // compile and measure blocklisted kernels anyway
  TestFaults test_faults;           // test only: deliberately broken candidates
};

struct PipelineSettings {
  std::string op;  // "gemm", "attention"
  cache::TuningKey key;
  std::string options_sha256;
  std::string fresh_run_id;
  bool predict_only = false;
  double flops = 0;
  int compile_threads = 0;
  BenchSetup bench;  // problem_key, device, seed, workspace, database path, protocol
  IsolationOptions isolation;
};

// Sets s.options_sha256: a SHA-256 over everything that shapes a run's candidate list, so that
// only a run with the same options is resumed — s.op, `op_fields` (the op's own search options),
// predict-only, the benchmark protocol's options, the blocklist override, `config_keys` (explicit
// candidates) and any test faults.
void set_options_sha256(PipelineSettings& s, const std::vector<std::string>& op_fields,
                        const std::vector<std::string>& config_keys);

// Where a run's time went (wall seconds unless named otherwise).
struct PipelineStats {
  double setup_s = 0;         // starting the benchmark worker and setting the problem up
  double compile_busy_s = 0;  // time with at least one compile in flight (database hits too)
  double compile_cpu_s = 0;   // NVRTC's own time, summed over the compiles this run ran
  double measure_busy_s = 0;  // time in the benchmark worker's measure and re-measure requests
  int num_speculative = 0;    // compiles started ahead of their round
};

class CandidatePipeline {
 public:
  CandidatePipeline(cache::Database& db, PipelineSettings settings);

  RunLedger& ledger() { return ledger_; }
  const PipelineSettings& settings() const { return settings_; }

  // CandidateCompiler::compile of make_source(), at most once per config key in the run: a later
  // call for the key (a round asking for a key compiled ahead of it) waits for the first and gets
  // its outcome, `speculative` set when the first was a speculative one. Thread-safe. Nothing it
  // returns is blocklisted: compile_crash and timeout are host-side outcomes, recorded for this
  // run only.
  CompileOutcome compile(const std::string& config_key,
                         const std::function<gen::GeneratedSource()>& make_source,
                         bool speculative = false);
  // Starts the benchmark worker and sets the problem up, unless done (measure does it on first
  // use otherwise).
  void prepare_bench();
  // BenchWorker::measure with its early-stop bar (0: none); a crash on the device (illegal
  // address, launch failure, timeout) goes on the blocklist.
  TrialOutcome measure(const std::string& config_key, const CompileOutcome& compiled,
                       double predicted_us, double stop_above_us);
  bool remeasure(const std::vector<std::string>& config_keys,
                 const std::vector<const cache::CubinRecord*>& cubins,
                 const std::vector<double>& predicted_us, std::vector<Timing*>& timings,
                 int rounds);

  int num_worker_restarts() const;
  PipelineStats stats() const;

 private:
  void blocklist(const std::string& config_key, const CompileOutcome& compiled,
                 cache::Status reason, const std::string& detail);
  BenchWorker& bench();
  void add_measure_time(std::chrono::steady_clock::time_point start);

  struct RunCompile {
    std::shared_future<CompileOutcome> outcome;
    bool speculative = false;
  };

  cache::Database& db_;
  PipelineSettings settings_;
  RunLedger ledger_;
  CandidateCompiler compiler_;
  std::optional<BenchWorker> bench_;
  mutable std::mutex mutex_;  // guards compiles_, stats_ and the busy clock
  std::map<std::string, RunCompile> compiles_;
  PipelineStats stats_;
  int compiles_in_flight_ = 0;
  std::chrono::steady_clock::time_point busy_since_;
};

// ---- the steps over a tuner's candidate type --------------------------------------------------
// C has: config_key, predicted_us, status, detail, timing, compile_ms,
// compiled_from_cache, registers, spill_bytes.

template <class C>
CandidateRow row_of(const C& c) {
  return {c.config_key, c.status, c.predicted_us, &c.timing, c.detail};
}

// Takes a candidate's outcome from its row of the run being resumed.
template <class C>
void apply_prior(C& c, const cache::Measurement& m) {
  c.status = m.status == cache::Status::kPredicted ? cache::Status::kOk : m.status;
  c.detail = m.detail;
  if (m.status == cache::Status::kOk) {
    c.timing.median_us = c.timing.p10_us = c.timing.p90_us = m.median_us;
    c.timing.num_reps = m.num_reps;
  }
}

inline bool needs_cubin(cache::Status status) {
  return status == cache::Status::kOk || status == cache::Status::kPredicted;
}

// The fastest `finalists` measured candidates, re-measured round-robin in the worker (their
// timings replaced by the pooled samples). Returns their indices (empty when fewer than two, or
// when the re-measurement failed).
template <class C>
std::vector<std::size_t> remeasure_finalists(
    CandidatePipeline& pipe, std::vector<C>& cands,
    const std::vector<std::optional<CompileOutcome>>& compiled, int finalists, int rounds) {
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < cands.size(); ++i)
    if (cands[i].status == cache::Status::kOk && cands[i].timing.num_reps > 0 && compiled[i])
      ok.push_back(i);
  std::sort(ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) {
    return cands[a].timing.median_us < cands[b].timing.median_us;
  });
  if (ok.size() > std::size_t(finalists)) ok.resize(finalists);
  if (ok.size() < 2) return {};
  std::vector<std::string> keys;
  std::vector<const cache::CubinRecord*> cubins;
  std::vector<double> predicted;
  std::vector<Timing*> timings;
  for (std::size_t i : ok) {
    keys.push_back(cands[i].config_key);
    cubins.push_back(&*compiled[i]->record);
    predicted.push_back(cands[i].predicted_us);
    timings.push_back(&cands[i].timing);
  }
  if (!pipe.remeasure(keys, cubins, predicted, timings, rounds)) return {};
  return ok;
}

// The order of the pick (best first): the candidates `score` gives a value, by that value. When
// finalists were re-measured only they compete: their pooled timings were taken side by side,
// while a non-finalist's figure is from the first pass, and a drift of the clocks between the
// passes (a GPU heating up under long GEMMs) would let a stale figure win.
template <class C, class Score>
std::vector<std::size_t> pick_order(const std::vector<C>& cands,
                                    const std::vector<std::size_t>& finalists, Score score) {
  std::vector<std::size_t> order;
  if (!finalists.empty()) {
    for (std::size_t i : finalists)
      if (score(cands[i])) order.push_back(i);
  } else {
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (score(cands[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return *score(cands[a]) < *score(cands[b]);
  });
  return order;
}

// The run's last transaction: the finalists' rows, the winner, the run marked done.
template <class C>
void finish_run(CandidatePipeline& pipe, const std::vector<C>& cands,
                const std::vector<std::size_t>& finalists, std::optional<std::size_t> winner) {
  std::vector<CandidateRow> rows;
  for (std::size_t i : finalists) rows.push_back(row_of(cands[i]));
  std::optional<CandidateRow> w;
  if (winner) w = row_of(cands[*winner]);
  pipe.ledger().finish(rows, w);
}

}  // namespace kt::tune
