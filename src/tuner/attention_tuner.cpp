// The attention tuning loop.
#include "tuner/attention_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "tuner/candidate_pipeline.hpp"
#include "tuner/tuning_record.hpp"

namespace kt::tune {

namespace {

using Clock = std::chrono::steady_clock;

// The settings of an attention run; its own search options (finalists) join the options hash.
PipelineSettings attention_pipeline_settings(const AttentionProblem& p,
                                             const AttentionTuneOptions& o,
                                             const cache::TuningKey& key, const std::string& run_id,
                                             std::uint64_t seed, const std::string& db_path) {
  PipelineSettings s;
  s.op = "attention";
  s.key = key;
  s.fresh_run_id = run_id;
  s.predict_only = o.predict_only;
  s.flops = p.flops();
  s.compile_threads = o.compile_threads;
  s.bench = {to_key(p), o.device_ordinal, seed, 0, db_path, o.bench};
  s.isolation = o.isolation;
  std::vector<std::string> config_keys;
  for (const AttentionConfig& c : o.configs) config_keys.push_back(to_key(c));
  set_options_sha256(s, {fmt::format("{} {}", o.finalists, o.finalist_rounds)}, config_keys);
  return s;
}

}  // namespace

AttentionTuneReport tune_attention(const AttentionProblem& p, cache::Database& db,
                                   const AttentionTuneOptions& o) {
  validate(p);
  AttentionTuneReport report;
  report.problem = p;
  const TuningSession session(o.predict_only, o.device, o.device_ordinal, o.run_id, o.seed);
  const DeviceDesc& device = session.device();
  const std::uint64_t seed = session.seed();
  report.run_id = session.run_id();
  report.predicted = o.predict_only;
  report.device_fingerprint = device.fingerprint();

  const std::vector<AttentionConfig> space =
      o.configs.empty() ? enumerate_attention_configs(p, device) : o.configs;
  for (const auto& r : rank_by_model(p, space, device)) {
    AttentionCandidate c;
    c.config = r.config;
    c.estimate = r.estimate;
    if (auto why = validate(p, r.config, device)) {
      c.status = cache::Status::kRejected;
      c.detail = *why;
    }
    report.candidates.push_back(c);
  }
  if (report.candidates.empty())
    throw Error(ErrorKind::kUnsupported,
                fmt::format("no valid attention config for {}", to_key(p)));

  const cache::TuningKey key{to_key(p), report.device_fingerprint, kBenchmarkProtocolVersion,
                             kAttentionTemplateVersion};
  CandidatePipeline pipe(db,
                         attention_pipeline_settings(p, o, key, report.run_id, seed, db.path()));
  report.run_id = pipe.ledger().run_id();
  report.resumed = pipe.ledger().resumed();
  std::vector<std::optional<CompileOutcome>> compiled;
  const auto compile_start = Clock::now();
  compile_candidates(
      pipe, report.candidates, 0, compiled, o.progress,
      [&](const AttentionCandidate& c) {
        return gen::generate_attention(p, c.config, false, device.arch());
      },
      [&](AttentionCandidate& c) { c.estimate = estimate(p, c.config, device, c.registers); });
  report.compile_wall_s = seconds_since(compile_start);
  for (const auto& c : report.candidates) {
    if (c.status != cache::Status::kOk) continue;
    if (c.compiled_from_cache)
      ++report.num_cache_hits;
    else
      ++report.num_compiled;
  }
  const auto measure_start = Clock::now();
  std::vector<std::size_t> finalists;
  if (!o.predict_only) {
    measure_candidates(pipe, report.candidates, 0, compiled, o.progress, p.flops());
    finalists =
        remeasure_finalists(pipe, report.candidates, compiled, o.finalists, o.finalist_rounds);
  }
  report.measure_wall_s = seconds_since(measure_start);

  auto score = [&](const AttentionCandidate& c) -> std::optional<double> {
    if (c.status != cache::Status::kOk) return std::nullopt;
    if (o.predict_only) return c.estimate.predicted_us;
    if (c.timing.num_reps == 0) return std::nullopt;
    return c.timing.median_us;
  };
  const std::vector<std::size_t> order = pick_order(report.candidates, finalists, score);
  if (!order.empty()) report.winner = order[0];
  if (order.size() > 1) report.runner_up = order[1];

  finish_run(pipe, report.candidates, finalists, report.winner);
  report.num_worker_restarts = pipe.num_worker_restarts();
  return report;
}

}  // namespace kt::tune
