// The attention tuning loop.
#include "tuner/attention_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "runtime/attention_kernel.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "tuner/attention_workload.hpp"
#include "tuner/tuning_record.hpp"

namespace kt::tune {

namespace {

using Clock = std::chrono::steady_clock;

void measure(const AttentionProblem& p, std::vector<AttentionCandidate>& cands,
             const std::vector<std::optional<cache::CubinRecord>>& cubins, cache::Database& db,
             const DeviceDesc& device, const AttentionTuneOptions& o, std::uint64_t seed) {
  const rt::CudaDriver& d = rt::driver();
  rt::OwnedStream owned_stream;
  const CUstream stream = owned_stream.get();
  rt::ModuleCache modules;
  AttentionWorkload work(p, device, &db, modules, stream, seed);
  Bench bench(stream, std::size_t(2 * device.l2_bytes));
  std::vector<rt::AttentionKernel> kernels(cands.size());
  const AttentionTensors tensors = work.tensors(false);
  ProgressTracker tracker(o.progress, "measure", int(cands.size()));
  bool context_lost = false;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    AttentionCandidate& c = cands[i];
    if (c.status != cache::Status::kOk || !cubins[i] || context_lost) {
      if (context_lost && c.status == cache::Status::kOk) {
        c.status = cache::Status::kLaunchError;
        c.detail = "not measured: an earlier candidate broke the CUDA context";
      }
      tracker.step(fmt::format("{} skipped ({})", to_key(c.config), cache::to_string(c.status)));
      continue;
    }
    try {
      kernels[i] = rt::AttentionKernel(p, c.config, modules.load(*cubins[i]));
      work.poison_output();
      rt::check(kernels[i].launch(tensors, stream), "cuLaunchKernel(attention)");
      const OutputCheck check = work.check_output(false);
      if (!check.passed) {
        c.status = cache::Status::kWrongResult;
        c.detail = check.detail;
        tracker.step(fmt::format("{} WRONG: {}", to_key(c.config), check.detail));
        continue;
      }
      c.timing = bench.measure([&](CUstream s) { return kernels[i].launch(tensors, s); }, o.bench);
      tracker.step(fmt::format("{} {:.1f} us ({:.0f} TFLOP/s, model {:.1f} us)", to_key(c.config),
                               c.timing.median_us, p.flops() / c.timing.median_us / 1e6,
                               c.estimate.predicted_us));
    } catch (const Error& e) {
      c.status = cache::Status::kLaunchError;
      c.detail = e.what();
      context_lost = d.ctx_synchronize() != CUDA_SUCCESS;
      tracker.step(fmt::format("{} failed: {}", to_key(c.config), e.what()));
    }
  }
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < cands.size(); ++i)
    if (cands[i].status == cache::Status::kOk && cands[i].timing.num_reps > 0) ok.push_back(i);
  std::sort(ok.begin(), ok.end(), [&](auto a, auto b) { return cands[a].timing.median_us < cands[b].timing.median_us; });
  if (ok.size() > std::size_t(o.finalists)) ok.resize(o.finalists);
  if (ok.size() < 2 || context_lost) return;
  std::vector<std::function<CUresult(CUstream)>> launches;
  std::vector<Timing*> timings;
  for (std::size_t i : ok) {
    launches.push_back([&kernels, &tensors, i](CUstream s) { return kernels[i].launch(tensors, s); });
    timings.push_back(&cands[i].timing);
  }
  bench.remeasure_interleaved(launches, timings, o.finalist_rounds);
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
    throw Error(ErrorKind::kUnsupported, fmt::format("no valid attention config for {}", to_key(p)));

  std::vector<std::optional<cache::CubinRecord>> cubins(report.candidates.size());
  const auto compile_start = Clock::now();
  ProgressTracker tracker(o.progress, "compile", int(report.candidates.size()));
  parallel_for(0, report.candidates.size(), o.compile_threads, [&](std::size_t i) {
    AttentionCandidate& c = report.candidates[i];
    if (c.status != cache::Status::kOk) {
      tracker.step(fmt::format("{} rejected: {}", to_key(c.config), c.detail));
      return;
    }
    try {
      rt::CubinResult r = rt::get_or_compile(&db, gen::generate_attention(p, c.config, false, device.arch()), true, true);
      c.compile_ms = r.record.compile_ms;
      c.compiled_from_cache = !r.compiled_now;
      c.registers = r.record.registers;
      c.spill_bytes = r.record.spill_bytes;
      c.estimate = estimate(p, c.config, device, c.registers);
      cubins[i] = std::move(r.record);
      reject_if_spilling(c.spill_bytes, c.status, c.detail);
      tracker.step(fmt::format("{} {} regs={} spills={}", to_key(c.config),
                               c.compiled_from_cache ? "cached" : "compiled", c.registers, c.spill_bytes));
    } catch (const CompileError& e) {
      c.status = cache::Status::kCompileError;
      c.detail = e.log().substr(0, 2000);
      tracker.step(fmt::format("{} failed to compile", to_key(c.config)));
    }
  });
  report.compile_wall_s = seconds_since(compile_start);
  for (const auto& c : report.candidates) {
    if (c.status != cache::Status::kOk) continue;
    if (c.compiled_from_cache) ++report.num_cache_hits;
    else ++report.num_compiled;
  }
  const auto measure_start = Clock::now();
  if (!o.predict_only) measure(p, report.candidates, cubins, db, device, o, seed);
  report.measure_wall_s = seconds_since(measure_start);

  auto score = [&](const AttentionCandidate& c) -> std::optional<double> {
    if (c.status != cache::Status::kOk) return std::nullopt;
    if (o.predict_only) return c.estimate.predicted_us;
    if (c.timing.num_reps == 0) return std::nullopt;
    return c.timing.median_us;
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < report.candidates.size(); ++i)
    if (score(report.candidates[i])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
    return *score(report.candidates[a]) < *score(report.candidates[b]);
  });
  if (!order.empty()) report.winner = order[0];
  if (order.size() > 1) report.runner_up = order[1];

  const cache::TuningKey key{to_key(p), report.device_fingerprint, kBenchmarkProtocolVersion,
                             kAttentionTemplateVersion};
  std::vector<CandidateRow> rows;
  for (const auto& c : report.candidates)
    rows.push_back({to_key(c.config), c.status, c.estimate.predicted_us, &c.timing, c.detail});
  record_tuning(db, key, report.run_id, o.predict_only, p.flops(), rows, report.winner);
  return report;
}

}  // namespace kt::tune
