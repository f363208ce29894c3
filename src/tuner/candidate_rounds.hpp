// One round of a tuner's candidates through the pipeline (candidate_pipeline.hpp): their compiles
// go to the compile pool in model order, and the calling thread, the measurer, verifies and times
// each as soon as it is compiled, the lowest index ready first, so the GPU works while later
// candidates compile. A candidate whose first repetitions are all clearly slower than the best
// median so far stops there (Bench::measure's early stop). Predicting, a round only compiles.
// Every row is recorded the moment its outcome is known.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner/candidate_pipeline.hpp"
#include "tuner/compile_pool.hpp"
#include "tuner/progress.hpp"

namespace kt::tune {

// The early-stop bar for a candidate measured after a best median of best_us: (1 + margin) x
// best_us; 0 (no bar: time it fully) without a best or with margin <= 0.
inline double early_stop_bar_us(double best_us, double margin) {
  return best_us > 0 && margin > 0 ? (1.0 + margin) * best_us : 0.0;
}

struct RoundSettings {
  ProgressFn progress;
  double flops = 0;              // the problem's, for TFLOP/s in progress lines
  double early_stop_margin = 0;  // early_stop_bar_us's margin
  // Called by the measurer once a candidate's outcome is final: its index and its measured
  // median (nullopt: failed, rejected or not measured). The tuner refreshes the speculative
  // compiles with it.
  std::function<void(std::size_t, std::optional<double>)> on_final;
};

// What the measurer keeps across a problem's rounds.
struct MeasurerState {
  double best_us = 0;         // the best fully timed median so far (0: none)
  double wait_s = 0;          // time spent waiting for a compile to finish
  int num_measured = 0;       // candidates sent to the GPU (a resumed row is not)
  int num_stopped_early = 0;  // of them, timed ok and stopped early
};

// Compiles cand (make_source(config_key) → gen::GeneratedSource; re_estimate(cand) updates its
// predicted_us from its registers) unless it is rejected or resumed with a row that needs no
// cubin; records the rows compiling makes final (failures; every candidate when predicting).
// `compiled` receives a usable cubin.
template <class C, class MakeSource, class ReEstimate>
void compile_candidate(CandidatePipeline& pipe, C& c, std::optional<CompileOutcome>& compiled,
                       ProgressTracker& tracker, const MakeSource& make_source,
                       const ReEstimate& re_estimate) {
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
  CompileOutcome out = pipe.compile(key, [&] { return make_source(key); });
  c.status = out.status;
  c.detail = out.detail;
  c.compiled_from_cache = out.from_cache;
  c.compiled_ahead = out.speculative;
  if (out.record) {
    c.compile_ms = out.record->compile_ms;
    c.registers = out.record->registers;
    c.spill_bytes = out.record->spill_bytes;
    re_estimate(c);
    reject_if_spilling(c.spill_bytes, c.status, c.detail);
  }
  const bool usable = c.status == cache::Status::kOk && out.record;
  const std::string what =
      usable ? fmt::format("{}{} regs={} spills={}", out.from_cache ? "cached" : "compiled",
                           out.speculative ? " ahead" : "", c.registers, c.spill_bytes)
             : fmt::format("{}: {}", cache::to_string(c.status),
                           c.detail.substr(0, c.detail.find('\n')));
  const bool worker_died = out.worker_died;
  if (usable) compiled = std::move(out);
  if (prior)
    apply_prior(c, *prior);
  else if (!usable || pipe.settings().predict_only)
    pipe.ledger().record(row_of(c));
  tracker.step(fmt::format("{} {}{}", key, what, worker_died ? " (compile worker restarted)" : ""));
}

// Verifies and times a compiled candidate that has no row yet, with the early-stop bar of the
// best so far, and records its row.
template <class C>
void measure_candidate(CandidatePipeline& pipe, C& c, const std::optional<CompileOutcome>& compiled,
                       const RoundSettings& settings, MeasurerState& state,
                       ProgressTracker& tracker) {
  const std::string key = c.config_key;
  if (c.status != cache::Status::kOk || !compiled) {
    tracker.step(fmt::format("{} skipped ({})", key, cache::to_string(c.status)));
    return;
  }
  if (pipe.ledger().prior(key)) {
    tracker.step(fmt::format("{} {:.1f} us (resumed)", key, c.timing.median_us));
    return;
  }
  const double bar = early_stop_bar_us(state.best_us, settings.early_stop_margin);
  const TrialOutcome t = pipe.measure(key, *compiled, c.predicted_us, bar);
  ++state.num_measured;
  c.status = t.status;
  c.detail = t.detail;
  c.timing = t.timing;
  const bool stopped_early = c.status == cache::Status::kOk && c.timing.stopped_early;
  state.num_stopped_early += stopped_early;
  if (stopped_early)
    c.detail =
        fmt::format("stopped early: its {} repetitions all over {:.2f} us ({:.2f} x the best)",
                    c.timing.num_reps, bar, 1.0 + settings.early_stop_margin);
  pipe.ledger().record(row_of(c));
  const std::string restarted = t.worker_died ? " (benchmark worker restarted)" : "";
  if (c.status == cache::Status::kOk)
    tracker.step(fmt::format("{} {:.1f} us ({:.0f} TFLOP/s, model {:.1f} us){}", key,
                             c.timing.median_us, settings.flops / c.timing.median_us / 1e6,
                             c.predicted_us, c.timing.stopped_early ? " stopped early" : ""));
  else
    tracker.step(fmt::format("{} {}: {}{}", key, cache::to_string(c.status),
                             c.detail.substr(0, c.detail.find('\n')), restarted));
}

// Runs cands[begin, end) as one round (top of file). compiled grows to cands.size(). Throws what
// a compile throws that no candidate owns (kt::Error), after the round's running compiles end.
template <class C, class MakeSource, class ReEstimate>
void run_round(CandidatePipeline& pipe, CompilePool& pool, std::vector<C>& cands, std::size_t begin,
               std::vector<std::optional<CompileOutcome>>& compiled, const RoundSettings& settings,
               MeasurerState& state, MakeSource make_source, ReEstimate re_estimate) {
  compiled.resize(cands.size());
  const std::size_t count = cands.size() - begin;
  const bool measuring = !pipe.settings().predict_only;
  CompiledQueue queue(count);
  ProgressTracker compile_tracker(settings.progress, "compile", int(count));
  ProgressTracker measure_tracker(settings.progress, "measure", int(count));
  // Declared last, so it runs first on the way out: no job of this round outlives the state
  // above or `cands`.
  struct CancelRound {
    CompilePool& pool;
    ~CancelRound() { pool.cancel_round(); }
  } cancel{pool};
  for (std::size_t i = begin; i < cands.size(); ++i)
    pool.submit([&, i] {
      try {
        compile_candidate(pipe, cands[i], compiled[i], compile_tracker, make_source, re_estimate);
        queue.done(i - begin);
      } catch (...) {
        queue.fail(std::current_exception());
      }
    });
  if (measuring) pipe.prepare_bench();
  while (true) {
    const auto wait_start = std::chrono::steady_clock::now();
    const std::optional<std::size_t> next = queue.take();
    state.wait_s += seconds_since(wait_start);
    if (!next) break;
    C& c = cands[begin + *next];
    if (measuring)
      measure_candidate(pipe, c, compiled[begin + *next], settings, state, measure_tracker);
    std::optional<double> us;
    if (c.status == cache::Status::kOk && c.timing.num_reps > 0) {
      us = c.timing.median_us;
      if (!c.timing.stopped_early && (state.best_us == 0 || *us < state.best_us))
        state.best_us = *us;
    }
    if (settings.on_final) settings.on_final(begin + *next, us);
  }
}

}  // namespace kt::tune
