// The GEMM tuning loop.
#include "tuner/gemm_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "tuner/candidate_pipeline.hpp"
#include "tuner/gemm_search.hpp"
#include "tuner/tuning_record.hpp"

namespace kt::tune {

namespace {

using Clock = std::chrono::steady_clock;

// Round 1 measures at least this many small-M tile shapes when the problem has them (M <= 64):
// the family's model is new, and the sm80/sm90 models do not see the bandwidth their few CTAs
// leave unused at small M, so model order alone could keep the family from being measured.
constexpr int kSmallMFirstRoundShapes = 8;

CandidateResult make_candidate(const GemmProblem& p, const GemmConfig& c,
                               const DeviceDesc& device) {
  CandidateResult r;
  r.config = c;
  if (auto why = validate(p, c, device)) {
    r.status = cache::Status::kRejected;
    r.detail = *why;
  } else {
    r.estimate = estimate(p, c, device);
  }
  return r;
}

// Round 1: the explicit configs, or the model's best config of each distinct tile shape.
std::vector<CandidateResult> first_round(const GemmProblem& p, const TuneOptions& o,
                                         const DeviceDesc& device,
                                         const std::vector<RankedConfig>& ranked) {
  std::vector<CandidateResult> out;
  if (!o.configs.empty()) {
    for (const auto& c : o.configs) out.push_back(make_candidate(p, c, device));
    return out;
  }
  auto add_distinct_shapes = [&](bool small_m_only, int limit) {
    for (const auto& r : ranked) {
      if (int(out.size()) >= limit) break;
      if (small_m_only && r.config.family != GemmFamily::kSmallM) continue;
      if (std::any_of(out.begin(), out.end(),
                      [&](const CandidateResult& c) { return same_shape(c.config, r.config); }))
        continue;
      out.push_back({r.config, r.estimate});
    }
  };
  add_distinct_shapes(true, std::min(kSmallMFirstRoundShapes, o.max_candidates));
  add_distinct_shapes(false, o.max_candidates);
  // Keep model order: the local rounds and the report read candidates as ranked.
  std::stable_sort(out.begin(), out.end(), [](const CandidateResult& a, const CandidateResult& b) {
    return a.estimate.predicted_us < b.estimate.predicted_us;
  });
  return out;
}

// A local round (local_round), for each of the best shapes so far: up to this many neighbouring
// shapes (neighbour_moves), each by its config closest to the best one. Round 1 measures the
// model's favourite shapes; this measures the ones next to what the GPU preferred, in the best
// one's variant (a neighbour timed with another pipeline depth can lose by 30%). Besides, up to
// kRetriedShapes neighbouring shapes that were timed with a variant farther from the best one
// than their closest config.
constexpr int kNeighbourShapes = 6;
constexpr int kRetriedShapes = 2;

// The rounds of local search after the first, at most: each searches around the bases
// (search_bases) that no earlier round searched, so a shape found in round 2 gets its own
// neighbours in round 3 (a shape's best neighbour may have been timed only with a poor variant).
constexpr int kLocalRounds = 3;

// A round of local search: for the two best tile shapes so far and the best of each other
// family, those not in `searched` (which gains them), their other variants in model order, then
// the shapes next to them. Empty when every base was searched before.
std::vector<CandidateResult> local_round(const std::vector<CandidateResult>& done,
                                         const TuneOptions& o,
                                         const std::vector<RankedConfig>& ranked, bool predicted,
                                         std::vector<GemmConfig>& searched) {
  std::vector<const CandidateResult*> best;
  for (const auto& c : done) {
    if (c.status != cache::Status::kOk) continue;
    if (!predicted && c.timing.num_reps == 0) continue;
    best.push_back(&c);
  }
  auto time = [predicted](const CandidateResult* c) {
    return predicted ? c->estimate.predicted_us : c->timing.median_us;
  };
  std::sort(best.begin(), best.end(), [&](auto* a, auto* b) { return time(a) < time(b); });
  // The two best, and the best of every other family: a family's best shape can be a step from
  // a faster one of its own while other families hold the top two.
  std::vector<GemmConfig> by_time;
  for (const CandidateResult* c : best) by_time.push_back(c->config);
  std::vector<const CandidateResult*> bases;
  for (std::size_t i : search_bases(by_time)) {
    if (std::find(searched.begin(), searched.end(), best[i]->config) != searched.end()) continue;
    searched.push_back(best[i]->config);
    bases.push_back(best[i]);
  }
  best = std::move(bases);
  std::vector<CandidateResult> out;
  for (const CandidateResult* shape : best) {
    int added = 0;
    for (const auto& r : ranked) {
      if (added >= o.refine_per_shape) break;
      if (!same_shape(r.config, shape->config)) continue;
      auto seen = [&](const CandidateResult& c) { return c.config == r.config; };
      if (std::any_of(done.begin(), done.end(), seen) || std::any_of(out.begin(), out.end(), seen))
        continue;
      out.push_back({r.config, r.estimate});
      ++added;
    }
  }
  // The shapes next to each base, by their configs closest to it (neighbour_moves).
  std::vector<GemmConfig> candidates;
  for (const auto& r : ranked) candidates.push_back(r.config);
  for (const CandidateResult* shape : best) {
    std::vector<GemmConfig> measured;
    for (const auto& c : done) measured.push_back(c.config);
    for (const auto& c : out) measured.push_back(c.config);
    for (std::size_t i :
         neighbour_moves(shape->config, candidates, measured, kNeighbourShapes, kRetriedShapes))
      out.push_back({ranked[i].config, ranked[i].estimate});
  }
  return out;
}

// The settings of a GEMM run; its own search options (rounds, finalists, workspace) join the
// options hash.
PipelineSettings gemm_pipeline_settings(const GemmProblem& p, const TuneOptions& o,
                                        const cache::TuningKey& key, const std::string& run_id,
                                        std::uint64_t seed, const std::string& db_path) {
  PipelineSettings s;
  s.op = "gemm";
  s.key = key;
  s.fresh_run_id = run_id;
  s.predict_only = o.predict_only;
  s.flops = p.flops();
  s.compile_threads = o.compile_threads;
  s.bench = {to_key(p), o.device_ordinal, seed, o.max_workspace_bytes, db_path, o.bench};
  s.isolation = o.isolation;
  std::vector<std::string> config_keys;
  for (const GemmConfig& c : o.configs) config_keys.push_back(to_key(c));
  set_options_sha256(s,
                     {fmt::format("{} {} {} {} {}", o.max_candidates, o.refine_per_shape,
                                  o.finalists, o.finalist_rounds, o.max_workspace_bytes)},
                     config_keys);
  return s;
}

}  // namespace

TuneReport tune_gemm(const GemmProblem& p, cache::Database& db, const TuneOptions& o) {
  validate(p);
  TuneReport report;
  report.problem = p;
  const TuningSession session(o.predict_only, o.device, o.device_ordinal, o.run_id, o.seed);
  const DeviceDesc& device = session.device();
  const std::uint64_t seed = session.seed();
  report.run_id = session.run_id();
  report.predicted = o.predict_only;
  report.device_fingerprint = device.fingerprint();

  const std::vector<RankedConfig> ranked =
      o.configs.empty() ? rank_by_model(p, enumerate_gemm_configs(p, device), device)
                        : std::vector<RankedConfig>{};
  std::vector<RankedConfig> fitting;
  for (const auto& r : ranked)
    if (workspace_bytes(p, r.config, device.num_sms) <= std::int64_t(o.max_workspace_bytes))
      fitting.push_back(r);
  report.candidates = first_round(p, o, device, fitting);
  if (report.candidates.empty())
    throw Error(ErrorKind::kUnsupported,
                fmt::format("no valid GEMM config for {} on {}", to_key(p), device.name));

  const cache::TuningKey key{to_key(p), report.device_fingerprint, kBenchmarkProtocolVersion,
                             kGemmTemplateVersion};
  CandidatePipeline pipe(db, gemm_pipeline_settings(p, o, key, report.run_id, seed, db.path()));
  report.run_id = pipe.ledger().run_id();
  report.resumed = pipe.ledger().resumed();
  std::vector<std::optional<CompileOutcome>> compiled;
  auto run_round = [&](std::size_t begin) {
    const auto compile_start = Clock::now();
    compile_candidates(
        pipe, report.candidates, begin, compiled, o.progress,
        [&](const CandidateResult& c) { return gen::generate_gemm(p, c.config, device.arch()); },
        [&](CandidateResult& c) { c.estimate = estimate(p, c.config, device, c.registers); });
    report.compile_wall_s += seconds_since(compile_start);
    if (o.predict_only) return;
    const auto measure_start = Clock::now();
    measure_candidates(pipe, report.candidates, begin, compiled, o.progress, p.flops());
    report.measure_wall_s += seconds_since(measure_start);
  };
  run_round(0);
  if (o.configs.empty()) {
    std::vector<GemmConfig> searched;
    for (int round = 0; round < kLocalRounds; ++round) {
      const std::size_t begin = report.candidates.size();
      for (auto& c : local_round(report.candidates, o, fitting, o.predict_only, searched))
        report.candidates.push_back(std::move(c));
      if (report.candidates.size() == begin) break;
      run_round(begin);
    }
  }
  std::vector<std::size_t> finalists;
  if (!o.predict_only) {
    const auto finals_start = Clock::now();
    finalists =
        remeasure_finalists(pipe, report.candidates, compiled, o.finalists, o.finalist_rounds);
    report.measure_wall_s += seconds_since(finals_start);
  }
  for (const auto& c : report.candidates) {
    if (c.status == cache::Status::kOk && c.compiled_from_cache)
      ++report.num_cache_hits;
    else if (c.status == cache::Status::kOk)
      ++report.num_compiled;
  }

  // Pick: fastest measured, or (predicting) the best model time with compiled registers
  // (spilling kernels are already rejected).
  auto score = [&](const CandidateResult& c) -> std::optional<double> {
    if (c.status != cache::Status::kOk) return std::nullopt;
    if (o.predict_only) return c.estimate.predicted_us;
    if (c.timing.num_reps == 0) return std::nullopt;
    return c.timing.median_us;
  };
  const std::vector<std::size_t> order = pick_order(report.candidates, finalists, score);
  if (!order.empty()) report.winner = order[0];
  if (order.size() > 1) report.runner_up = order[1];
  if (report.winner && !o.predict_only) {
    // Rank of the winner in the model's order (candidates are in model order).
    std::vector<std::size_t> by_model;
    for (std::size_t i = 0; i < report.candidates.size(); ++i)
      if (score(report.candidates[i])) by_model.push_back(i);
    std::stable_sort(by_model.begin(), by_model.end(), [&](std::size_t a, std::size_t b) {
      return report.candidates[a].estimate.predicted_us <
             report.candidates[b].estimate.predicted_us;
    });
    report.winner_model_rank =
        int(std::find(by_model.begin(), by_model.end(), *report.winner) - by_model.begin());
  }

  // Every candidate's row is in; the finalists' rows, the winner and the run's end go together.
  finish_run(pipe, report.candidates, finalists, report.winner);
  report.num_worker_restarts = pipe.num_worker_restarts();
  return report;
}

}  // namespace kt::tune
