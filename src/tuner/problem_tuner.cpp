// The tune loop every op goes through (problem_tuner.hpp).
#include "tuner/problem_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "runtime/op_dispatch.hpp"
#include "tuner/candidate_rounds.hpp"
#include "tuner/compile_pool.hpp"
#include "tuner/model_calibration.hpp"
#include "tuner/op_tuning.hpp"
#include "tuner/tuning_record.hpp"

namespace kt::tune {

namespace {

using Clock = std::chrono::steady_clock;

// The settings of a run; the search options join the options hash, so only a run with the same
// options is resumed.
PipelineSettings pipeline_settings(const OpSpec& op, const std::string& problem_key,
                                   const ProblemSummary& summary, const TuneOptions& o,
                                   const cache::TuningKey& key, const std::string& run_id,
                                   std::uint64_t seed, const std::string& db_path) {
  PipelineSettings s;
  s.op = op.name();
  s.key = key;
  s.fresh_run_id = run_id;
  s.predict_only = o.predict_only;
  s.flops = summary.flops;
  s.compile_threads = o.compile_threads;
  s.bench = {problem_key, o.device_ordinal, seed, o.max_workspace_bytes, db_path, o.bench};
  s.isolation = o.isolation;
  set_options_sha256(
      s,
      {fmt::format("{} {} {} {} {} {}", o.max_candidates, o.first_round, o.refine_per_shape,
                   o.finalists, o.finalist_rounds, o.max_workspace_bytes),
       fmt::format("search={} early_stop={} calibrate={}",
                   o.search == SearchMode::kWide ? "wide" : "default", o.early_stop_margin,
                   o.calibrate)},
      o.configs);
  return s;
}

// The explicit configs as one round: each validated, a bad one a rejected row.
std::vector<Candidate> explicit_candidates(const OpSpec& op, const std::string& problem_key,
                                           const std::vector<std::string>& configs,
                                           const DeviceDesc& device) {
  std::vector<Candidate> out;
  for (const std::string& key : configs) {
    Candidate c;
    c.config_key = key;
    if (auto why = op.validate_config(problem_key, key, device)) {
      c.status = cache::Status::kRejected;
      c.detail = *why;
    } else {
      c.predicted_us = op.predicted_us(problem_key, key, device);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

TuneReport tune_problem(const std::string& problem_key, cache::Database& db, const TuneOptions& o) {
  const auto start = Clock::now();
  const OpEntry& entry = OpRegistry::instance().by_key(problem_key);
  const OpSpec& op = *entry.spec;
  TuneReport report;
  report.op = op.name();
  report.problem_key = problem_key;
  report.summary = op.summarize(problem_key);
  const TuningSession session(o.predict_only, o.device, o.device_ordinal, o.run_id, o.seed);
  const DeviceDesc& device = session.device();
  report.run_id = session.run_id();
  report.predicted = o.predict_only;
  report.device_fingerprint = device.fingerprint();

  // The workspace the problem's configs may use: the cap, or the scratch every config of the
  // problem needs when that is more (rt::workspace_cap_for, as the runtime grants it).
  const std::int64_t max_workspace =
      rt::workspace_cap_for(op, problem_key, device, std::int64_t(o.max_workspace_bytes));
  std::vector<RankedConfigKey> ranked;
  for (RankedConfigKey& r : op.ranked_configs(problem_key, device))
    if (op.workspace_bytes(problem_key, r.config_key, device) <= max_workspace)
      ranked.push_back(std::move(r));
  ModelCalibration calibration;
  if (o.calibrate)
    calibration =
        ModelCalibration::fit(op, problem_key, device,
                              db.measured_with_prefix(report.device_fingerprint, op.key_prefix()));
  calibration.apply(ranked);
  report.calibration = calibration.summary();

  std::unique_ptr<OpSearch> search;
  // A round of the search, cut to what the cap leaves (the round lists its best first).
  auto left_under_cap = [&] {
    if (o.max_candidates <= 0) return std::numeric_limits<std::size_t>::max();
    const std::size_t cap = std::size_t(o.max_candidates);
    return cap - std::min(report.candidates.size(), cap);
  };
  auto add_round = [&](std::vector<std::size_t> round) {
    if (round.size() > left_under_cap()) round.resize(left_under_cap());
    for (std::size_t i : round)
      report.candidates.push_back({ranked.at(i).config_key, ranked[i].predicted_us});
  };
  if (!o.configs.empty()) {
    report.candidates = explicit_candidates(op, problem_key, o.configs, device);
    for (Candidate& c : report.candidates) c.predicted_us *= calibration.factor(c.config_key);
  } else {
    if (o.search == SearchMode::kWide)
      search = model_top_search(
          ranked.size(), o.max_candidates > 0 ? std::size_t(o.max_candidates) : ranked.size());
    else
      search = entry.tuning->start_search(
          problem_key, ranked,
          {o.first_round, o.max_candidates, o.refine_per_shape, o.predict_only});
    add_round(search->next_round({}));
  }
  if (report.candidates.empty())
    throw Error(ErrorKind::kUnsupported, fmt::format("no valid {} config for {} on {}", op.name(),
                                                     problem_key, device.name));

  const cache::TuningKey key{problem_key, report.device_fingerprint, kBenchmarkProtocolVersion,
                             op.template_version()};
  CandidatePipeline pipe(db, pipeline_settings(op, problem_key, report.summary, o, key,
                                               report.run_id, session.seed(), db.path()));
  report.run_id = pipe.ledger().run_id();
  report.resumed = pipe.ledger().resumed();
  auto make_source = [&](const std::string& config_key) {
    return gen::generate(op, problem_key, config_key, "", device.arch());
  };
  auto re_estimate = [&](Candidate& c) {
    c.predicted_us = op.predicted_us(problem_key, c.config_key, device, c.registers) *
                     calibration.factor(c.config_key);
  };
  // Declared after the pipeline, so its threads end before it does.
  const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
  CompilePool pool(o.compile_threads > 0 ? o.compile_threads : hardware,
                   [&](const std::string& config_key) {
                     pipe.compile(
                         config_key, [&] { return make_source(config_key); }, true);
                   });
  // The pick's score: the measured median, or (predicting) the model's time with the compiled
  // registers (spilling kernels are already rejected).
  auto score = [&](const Candidate& c) -> std::optional<double> {
    if (c.status != cache::Status::kOk) return std::nullopt;
    if (o.predict_only) return c.predicted_us;
    if (c.timing.num_reps == 0) return std::nullopt;
    return c.timing.median_us;
  };
  // What the measurer knows of each candidate, for the search's preview of its next round:
  // compile threads write the candidates of the running round, so the preview reads only this.
  std::vector<SearchedConfig> known;
  RoundSettings round_settings;
  round_settings.progress = o.progress;
  round_settings.flops = report.summary.flops;
  round_settings.early_stop_margin = o.early_stop_margin;
  round_settings.on_final = [&](std::size_t i, std::optional<double> us) {
    known.at(i).us = us;
    if (!search || o.predict_only) return;
    std::vector<std::string> ahead;
    for (std::size_t r : search->preview(known)) {
      const std::string& config_key = ranked.at(r).config_key;
      const bool listed =
          std::any_of(report.candidates.begin(), report.candidates.end(),
                      [&](const Candidate& c) { return c.config_key == config_key; });
      if (!listed && ahead.size() < left_under_cap()) ahead.push_back(config_key);
    }
    pool.set_speculative(std::move(ahead));
  };
  MeasurerState measurer;
  std::vector<std::optional<CompileOutcome>> compiled;
  auto run_next_round = [&](std::size_t begin) {
    for (std::size_t i = known.size(); i < report.candidates.size(); ++i)
      known.push_back({report.candidates[i].config_key, std::nullopt});
    run_round(pipe, pool, report.candidates, begin, compiled, round_settings, measurer, make_source,
              re_estimate);
  };
  run_next_round(0);
  while (search && left_under_cap() > 0) {
    std::vector<SearchedConfig> searched;
    for (const Candidate& c : report.candidates) searched.push_back({c.config_key, score(c)});
    const std::size_t begin = report.candidates.size();
    add_round(search->next_round(searched));
    if (report.candidates.size() == begin) break;
    run_next_round(begin);
  }
  pool.set_speculative({});
  std::vector<std::size_t> finalists;
  if (!o.predict_only)
    finalists =
        remeasure_finalists(pipe, report.candidates, compiled, o.finalists, o.finalist_rounds);
  for (const Candidate& c : report.candidates) {
    if (c.status == cache::Status::kOk && c.compiled_from_cache)
      ++report.num_cache_hits;
    else if (c.status == cache::Status::kOk)
      ++report.num_compiled;
    report.num_ahead_used += c.compiled_ahead;
  }

  const std::vector<std::size_t> order = pick_order(report.candidates, finalists, score);
  if (!order.empty()) report.winner = order[0];
  if (order.size() > 1) report.runner_up = order[1];
  if (report.winner && !o.predict_only) {
    std::vector<std::size_t> by_model;
    for (std::size_t i = 0; i < report.candidates.size(); ++i)
      if (score(report.candidates[i])) by_model.push_back(i);
    std::stable_sort(by_model.begin(), by_model.end(), [&](std::size_t a, std::size_t b) {
      return report.candidates[a].predicted_us < report.candidates[b].predicted_us;
    });
    report.winner_model_rank =
        int(std::find(by_model.begin(), by_model.end(), *report.winner) - by_model.begin());
  }

  // Every candidate's row is in; the finalists' rows, the winner and the run's end go together.
  finish_run(pipe, report.candidates, finalists, report.winner);
  report.num_worker_restarts = pipe.num_worker_restarts();
  report.pipeline = pipe.stats();
  report.wait_s = measurer.wait_s;
  report.num_measured = measurer.num_measured;
  report.num_stopped_early = measurer.num_stopped_early;
  report.wall_s = seconds_since(start);
  return report;
}

std::optional<FinishedTuning> find_finished(const std::string& problem_key,
                                            const cache::Database& db, const TuneOptions& o) {
  const OpSpec& op = *OpRegistry::instance().by_key(problem_key).spec;
  const ProblemSummary summary = op.summarize(problem_key);
  const TuningSession session(o.predict_only, o.device, o.device_ordinal, o.run_id, 1);
  const cache::TuningKey key{problem_key, session.device().fingerprint(), kBenchmarkProtocolVersion,
                             op.template_version()};
  const PipelineSettings settings =
      pipeline_settings(op, problem_key, summary, o, key, session.run_id(), 1, db.path());
  std::optional<cache::TuningRun> run = db.last_finished_run(key, settings.options_sha256);
  if (!run) return std::nullopt;
  std::optional<cache::Winner> winner = db.find_winner(key);
  if (!winner || (winner->predicted && !o.predict_only)) return std::nullopt;
  return FinishedTuning{std::move(*run), std::move(*winner)};
}

}  // namespace kt::tune
