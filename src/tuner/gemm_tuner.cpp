// The GEMM tuning loop.
#include "tuner/gemm_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/gemm_kernel.hpp"
#include "tuner/gemm_workload.hpp"
#include "tuner/tuning_record.hpp"

namespace kt::tune {

namespace {

using Clock = std::chrono::steady_clock;

std::string first_lines(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? text : text.substr(0, pos);
}

bool same_shape(const GemmConfig& a, const GemmConfig& b) {
  return a.family == b.family && a.tile_m == b.tile_m && a.tile_n == b.tile_n &&
         a.warp_m == b.warp_m && a.warp_n == b.warp_n && a.consumers == b.consumers &&
         a.split_k == b.split_k;
}

CandidateResult make_candidate(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& device) {
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
  for (const auto& r : ranked) {
    if (std::any_of(out.begin(), out.end(),
                    [&](const CandidateResult& c) { return same_shape(c.config, r.config); }))
      continue;
    out.push_back({r.config, r.estimate});
    if (int(out.size()) >= o.max_candidates) break;
  }
  return out;
}

// Round 2: for the two best tile shapes so far, their other variants in model order.
std::vector<CandidateResult> second_round(const std::vector<CandidateResult>& done,
                                          const TuneOptions& o,
                                          const std::vector<RankedConfig>& ranked,
                                          bool predicted) {
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
  if (best.size() > 2) best.resize(2);
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
  return out;
}

// Compiles candidates[begin, end) that are still kOk, in parallel, into cubins[i].
void compile_range(const GemmProblem& p, std::vector<CandidateResult>& cands, std::size_t begin,
                   std::vector<std::optional<cache::CubinRecord>>& cubins, cache::Database& db,
                   const DeviceDesc& device, const TuneOptions& o) {
  cubins.resize(cands.size());
  ProgressTracker tracker(o.progress, "compile", int(cands.size() - begin));
  parallel_for(begin, cands.size(), o.compile_threads, [&](std::size_t i) {
    CandidateResult& c = cands[i];
    if (c.status != cache::Status::kOk) {
      tracker.step(fmt::format("{} rejected: {}", to_key(c.config), c.detail));
      return;
    }
    try {
      const gen::GeneratedSource source = gen::generate_gemm(p, c.config, device.arch());
      rt::CubinResult result = rt::get_or_compile(&db, source, true, true);
      c.compile_ms = result.record.compile_ms;
      c.compiled_from_cache = !result.compiled_now;
      c.registers = result.record.registers;
      c.spill_bytes = result.record.spill_bytes;
      c.estimate = estimate(p, c.config, device, c.registers);
      cubins[i] = std::move(result.record);
      reject_if_spilling(c.spill_bytes, c.status, c.detail);
      tracker.step(fmt::format("{} {} regs={} spills={}", to_key(c.config),
                               c.compiled_from_cache ? "cached" : "compiled", c.registers,
                               c.spill_bytes));
    } catch (const CompileError& e) {
      c.status = cache::Status::kCompileError;
      c.detail = first_lines(e.log(), 20);
      tracker.step(fmt::format("{} failed to compile", to_key(c.config)));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kNotFound) throw;  // no NVRTC at all: not a candidate's fault
      c.status = cache::Status::kCompileError;
      c.detail = e.what();
      tracker.step(fmt::format("{} failed to compile", to_key(c.config)));
    }
  });
}

// The GPU side of a tuning run: inputs, reference, timing harness and loaded kernels.
class GpuSession {
 public:
  GpuSession(const GemmProblem& p, const DeviceDesc& device, cache::Database& db,
             std::size_t workspace, std::uint64_t seed)
      : problem_(p),
        work_(p, device, &db, modules_, stream_.get(), seed, workspace),
        bench_(stream_.get(), std::size_t(2 * device.l2_bytes)) {}

  // Verifies and times candidates[begin, end).
  void measure(std::vector<CandidateResult>& cands, std::size_t begin,
               const std::vector<std::optional<cache::CubinRecord>>& cubins, const TuneOptions& o) {
    kernels_.resize(cands.size());
    ProgressTracker tracker(o.progress, "measure", int(cands.size() - begin));
    for (std::size_t i = begin; i < cands.size(); ++i) {
      CandidateResult& c = cands[i];
      if (c.status != cache::Status::kOk || !cubins[i]) {
        tracker.step(fmt::format("{} skipped ({})", to_key(c.config), cache::to_string(c.status)));
        continue;
      }
      if (context_lost_) {
        c.status = cache::Status::kLaunchError;
        c.detail = "not measured: an earlier candidate broke the CUDA context";
        tracker.step(fmt::format("{} not measured", to_key(c.config)));
        continue;
      }
      try {
        kernels_[i] = rt::GemmKernel(problem_, c.config, modules_.load(*cubins[i]));
        work_.poison_output();
        rt::check(launch(i, stream_.get()), "cuLaunchKernel");
        const OutputCheck check = work_.check_output();
        if (!check.passed) {
          c.status = cache::Status::kWrongResult;
          c.detail = check.detail;
          tracker.step(fmt::format("{} WRONG: {}", to_key(c.config), check.detail));
          continue;
        }
        c.timing = bench_.measure([&](CUstream s) { return launch(i, s); }, o.bench);
        tracker.step(fmt::format("{} {:.1f} us ({:.0f} TFLOP/s, model {:.1f} us)", to_key(c.config),
                                 c.timing.median_us, problem_.flops() / c.timing.median_us / 1e6,
                                 c.estimate.predicted_us));
      } catch (const Error& e) {
        c.status = cache::Status::kLaunchError;
        c.detail = e.what();
        context_lost_ = rt::driver().ctx_synchronize() != CUDA_SUCCESS;
        tracker.step(fmt::format("{} failed: {}", to_key(c.config), e.what()));
      }
    }
  }

  // The fastest few, re-measured round-robin so clock drift hits them alike.
  void remeasure_finalists(std::vector<CandidateResult>& cands, const TuneOptions& o) {
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (cands[i].status == cache::Status::kOk && cands[i].timing.num_reps > 0) ok.push_back(i);
    std::sort(ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) {
      return cands[a].timing.median_us < cands[b].timing.median_us;
    });
    if (ok.size() > std::size_t(o.finalists)) ok.resize(o.finalists);
    if (ok.size() < 2 || context_lost_) return;
    std::vector<std::function<CUresult(CUstream)>> launches;
    std::vector<Timing*> timings;
    for (std::size_t i : ok) {
      launches.push_back([this, i](CUstream s) { return launch(i, s); });
      timings.push_back(&cands[i].timing);
    }
    bench_.remeasure_interleaved(launches, timings, o.finalist_rounds);
  }

 private:
  CUresult launch(std::size_t i, CUstream s) {
    return kernels_[i].launch(work_.a(), work_.b(), work_.c(), work_.workspace(), s);
  }

  GemmProblem problem_;
  rt::ModuleCache modules_;  // before the workload and kernels that use its modules
  rt::OwnedStream stream_;
  GemmWorkload work_;
  Bench bench_;
  std::vector<rt::GemmKernel> kernels_;
  bool context_lost_ = false;
};

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
    if (workspace_bytes(p, r.config) <= std::int64_t(o.max_workspace_bytes)) fitting.push_back(r);
  report.candidates = first_round(p, o, device, fitting);
  if (report.candidates.empty())
    throw Error(ErrorKind::kUnsupported,
                fmt::format("no valid GEMM config for {} on {}", to_key(p), device.name));

  std::vector<std::optional<cache::CubinRecord>> cubins;
  std::optional<GpuSession> gpu;
  auto run_round = [&](std::size_t begin) {
    const auto compile_start = Clock::now();
    compile_range(p, report.candidates, begin, cubins, db, device, o);
    report.compile_wall_s += seconds_since(compile_start);
    if (o.predict_only) return;
    const auto measure_start = Clock::now();
    if (!gpu) gpu.emplace(p, device, db, std::size_t(o.max_workspace_bytes), seed);
    gpu->measure(report.candidates, begin, cubins, o);
    report.measure_wall_s += seconds_since(measure_start);
  };
  run_round(0);
  if (o.configs.empty()) {
    const std::size_t begin = report.candidates.size();
    for (auto& c : second_round(report.candidates, o, fitting, o.predict_only))
      report.candidates.push_back(std::move(c));
    if (report.candidates.size() > begin) run_round(begin);
  }
  if (gpu) {
    const auto finals_start = Clock::now();
    gpu->remeasure_finalists(report.candidates, o);
    report.measure_wall_s += seconds_since(finals_start);
  }
  for (const auto& c : report.candidates) {
    if (c.status == cache::Status::kOk && c.compiled_from_cache) ++report.num_cache_hits;
    else if (c.status == cache::Status::kOk) ++report.num_compiled;
  }

  // Pick: fastest measured, or (predicting) the best model time with compiled registers
  // (spilling kernels are already rejected).
  auto score = [&](const CandidateResult& c) -> std::optional<double> {
    if (c.status != cache::Status::kOk) return std::nullopt;
    if (o.predict_only) return c.estimate.predicted_us;
    if (c.timing.num_reps == 0) return std::nullopt;
    return c.timing.median_us;
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < report.candidates.size(); ++i)
    if (score(report.candidates[i])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return *score(report.candidates[a]) < *score(report.candidates[b]);
  });
  if (!order.empty()) report.winner = order[0];
  if (order.size() > 1) report.runner_up = order[1];
  if (report.winner && !o.predict_only) {
    // Rank of the winner in the model's order (candidates are in model order).
    std::vector<std::size_t> by_model;
    for (std::size_t i = 0; i < report.candidates.size(); ++i)
      if (score(report.candidates[i])) by_model.push_back(i);
    std::stable_sort(by_model.begin(), by_model.end(), [&](std::size_t a, std::size_t b) {
      return report.candidates[a].estimate.predicted_us < report.candidates[b].estimate.predicted_us;
    });
    report.winner_model_rank =
        int(std::find(by_model.begin(), by_model.end(), *report.winner) - by_model.begin());
  }

  // Record every candidate, then the winner.
  const cache::TuningKey key{to_key(p), report.device_fingerprint, kBenchmarkProtocolVersion,
                             kGemmTemplateVersion};
  std::vector<CandidateRow> rows;
  for (const auto& c : report.candidates)
    rows.push_back({to_key(c.config), c.status, c.estimate.predicted_us, &c.timing, c.detail});
  record_tuning(db, key, report.run_id, o.predict_only, p.flops(), rows, report.winner);
  return report;
}

}  // namespace kt::tune
