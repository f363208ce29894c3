// The crash-isolated path every tuner sends its candidates down, whatever the op: compile
// (database, else a compile worker), verify and time (the benchmark worker), re-measure the
// finalists, and record each outcome the moment it is known (RunLedger, so a killed run
// resumes). Kernels that crash the benchmark worker, break its CUDA context or hang on the GPU
// are put on the blocklist of this device; what fails on the host (a compile worker that dies
// or runs out of time, a worker that cannot start, NVRTC missing) never is. Configs are opaque
// here: a candidate is its config key, its generated source and its predicted time. The templates
// at the end run these steps over a tuner's own candidate type.
#pragma once

#include <fmt/format.h>

#include <algorithm>
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

class CandidatePipeline {
 public:
  CandidatePipeline(cache::Database& db, PipelineSettings settings);

  RunLedger& ledger() { return ledger_; }
  const PipelineSettings& settings() const { return settings_; }

  // CandidateCompiler::compile. Nothing it returns is blocklisted: compile_crash and timeout
  // are host-side outcomes, recorded for this run only.
  CompileOutcome compile(const std::string& config_key, gen::GeneratedSource source);
  // BenchWorker::measure (the worker starts on first use); a crash on the device (illegal
  // address, launch failure, timeout) goes on the blocklist.
  TrialOutcome measure(const std::string& config_key, const CompileOutcome& compiled,
                       double predicted_us);
  bool remeasure(const std::vector<std::string>& config_keys,
                 const std::vector<const cache::CubinRecord*>& cubins,
                 const std::vector<double>& predicted_us, std::vector<Timing*>& timings,
                 int rounds);

  int num_worker_restarts() const;

 private:
  void blocklist(const std::string& config_key, const CompileOutcome& compiled,
                 cache::Status reason, const std::string& detail);

  cache::Database& db_;
  PipelineSettings settings_;
  RunLedger ledger_;
  CandidateCompiler compiler_;
  std::optional<BenchWorker> bench_;
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

// Compiles cands[begin, end) on `threads` threads. make_source(c) → gen::GeneratedSource;
// re_estimate(c) updates c.predicted_us from c.registers. Records every row that compiling makes
// final: failures, and every candidate when predicting. compiled[i] holds the cubins.
template <class C, class MakeSource, class ReEstimate>
void compile_candidates(CandidatePipeline& pipe, std::vector<C>& cands, std::size_t begin,
                        std::vector<std::optional<CompileOutcome>>& compiled,
                        const ProgressFn& progress, MakeSource make_source,
                        ReEstimate re_estimate) {
  compiled.resize(cands.size());
  ProgressTracker tracker(progress, "compile", int(cands.size() - begin));
  parallel_for(begin, cands.size(), pipe.settings().compile_threads, [&](std::size_t i) {
    C& c = cands[i];
    const std::string key = c.config_key;
    const std::optional<cache::Measurement> prior = pipe.ledger().prior(key);
    if (c.status != cache::Status::kOk) {
      pipe.ledger().record(row_of(c));
      tracker.step(fmt::format("{} rejected: {}", key, c.detail));
      return;
    }
    if (prior && !needs_cubin(prior->status)) {
      apply_prior(c, *prior);
      tracker.step(fmt::format("{} {} (resumed)", key, cache::to_string(c.status)));
      return;
    }
    CompileOutcome out = pipe.compile(key, make_source(c));
    c.status = out.status;
    c.detail = out.detail;
    c.compiled_from_cache = out.from_cache;
    if (out.record) {
      c.compile_ms = out.record->compile_ms;
      c.registers = out.record->registers;
      c.spill_bytes = out.record->spill_bytes;
      re_estimate(c);
      reject_if_spilling(c.spill_bytes, c.status, c.detail);
    }
    const bool usable = c.status == cache::Status::kOk && out.record;
    const bool worker_died = out.worker_died;
    const std::string what =
        usable ? fmt::format("{} regs={} spills={}", out.from_cache ? "cached" : "compiled",
                             c.registers, c.spill_bytes)
               : fmt::format("{}: {}", cache::to_string(c.status),
                             c.detail.substr(0, c.detail.find('\n')));
    if (usable) compiled[i] = std::move(out);
    if (prior)
      apply_prior(c, *prior);
    else if (!usable || pipe.settings().predict_only)
      pipe.ledger().record(row_of(c));
    tracker.step(
        fmt::format("{} {}{}", key, what, worker_died ? " (compile worker restarted)" : ""));
  });
}

// Verifies and times, in order, the candidates of [begin, end) that compiled and have no row
// yet; records each row as it is known.
template <class C>
void measure_candidates(CandidatePipeline& pipe, std::vector<C>& cands, std::size_t begin,
                        const std::vector<std::optional<CompileOutcome>>& compiled,
                        const ProgressFn& progress, double flops) {
  ProgressTracker tracker(progress, "measure", int(cands.size() - begin));
  for (std::size_t i = begin; i < cands.size(); ++i) {
    C& c = cands[i];
    const std::string key = c.config_key;
    if (c.status != cache::Status::kOk || !compiled[i]) {
      tracker.step(fmt::format("{} skipped ({})", key, cache::to_string(c.status)));
      continue;
    }
    if (pipe.ledger().prior(key)) {
      tracker.step(fmt::format("{} {:.1f} us (resumed)", key, c.timing.median_us));
      continue;
    }
    const TrialOutcome t = pipe.measure(key, *compiled[i], c.predicted_us);
    c.status = t.status;
    c.detail = t.detail;
    c.timing = t.timing;
    pipe.ledger().record(row_of(c));
    const std::string restarted = t.worker_died ? " (benchmark worker restarted)" : "";
    if (c.status == cache::Status::kOk)
      tracker.step(fmt::format("{} {:.1f} us ({:.0f} TFLOP/s, model {:.1f} us)", key,
                               c.timing.median_us, flops / c.timing.median_us / 1e6,
                               c.predicted_us));
    else
      tracker.step(fmt::format("{} {}: {}{}", key, cache::to_string(c.status),
                               c.detail.substr(0, c.detail.find('\n')), restarted));
  }
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
