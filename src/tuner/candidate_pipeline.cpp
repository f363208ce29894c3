// The crash-isolated candidate path shared by the tuners.
#include "tuner/candidate_pipeline.hpp"

#include <fmt/format.h>

#include "core/log.hpp"
#include "core/sha256.hpp"
#include "generator/nvrtc_library.hpp"

namespace kt::tune {

void set_options_sha256(PipelineSettings& s, const std::vector<std::string>& op_fields,
                        const std::vector<std::string>& config_keys) {
  const BenchmarkOptions& b = s.bench.bench;
  Sha256 hash;
  hash.update_field("kerntune tuning options v2");
  hash.update_field(s.op);
  for (const std::string& f : op_fields) hash.update_field(f);
  hash.update_field(fmt::format("predict={} bench={} {} {} {} {} {}", s.predict_only, b.warmup,
                                b.warmup_ms, b.probe_reps, b.min_reps, b.max_reps, b.target_ms));
  hash.update_field(fmt::format("retry={}", s.isolation.retry_blocklisted));
  for (const std::string& key : config_keys) hash.update_field(key);
  for (const auto& [config, fault] : s.isolation.test_faults)
    hash.update_field(fmt::format("fault {}:{}", config, to_string(fault)));
  s.options_sha256 = hash.hex_digest();
}

CandidatePipeline::CandidatePipeline(cache::Database& db, PipelineSettings settings)
    : db_(db),
      settings_(std::move(settings)),
      ledger_(db, settings_.key, settings_.options_sha256, settings_.fresh_run_id,
              settings_.predict_only, settings_.flops),
      compiler_(db, CompileSettings{
                        settings_.key.device_fingerprint, settings_.isolation.compile_timeout_s,
                        settings_.isolation.retry_blocklisted, settings_.isolation.test_faults}) {}

CompileOutcome CandidatePipeline::compile(const std::string& config_key,
                                          const std::function<gen::GeneratedSource()>& make_source,
                                          bool speculative) {
  std::promise<CompileOutcome> promise;
  {
    std::unique_lock lock(mutex_);
    auto found = compiles_.find(config_key);
    if (found != compiles_.end()) {
      const RunCompile first = found->second;
      lock.unlock();
      CompileOutcome out = first.outcome.get();
      out.speculative = first.speculative;
      return out;
    }
    compiles_[config_key] = {promise.get_future().share(), speculative};
    if (compiles_in_flight_++ == 0) busy_since_ = std::chrono::steady_clock::now();
    if (speculative) ++stats_.num_speculative;
  }
  auto leave = [&](const CompileOutcome* out) {
    std::lock_guard lock(mutex_);
    if (--compiles_in_flight_ == 0) stats_.compile_busy_s += seconds_since(busy_since_);
    if (out && out->record && !out->from_cache)
      stats_.compile_cpu_s += out->record->compile_ms / 1000.0;
  };
  try {
    // NOTE: a compile worker that dies or runs out of time is never blocklisted: it says nothing
    // of the kernel on the device (the blocklist's key) and much of the host (a worker that
    // cannot run, a loaded machine, the toolkit). The candidate keeps its reason in this run
    // only.
    CompileOutcome out = compiler_.compile(config_key, make_source());
    out.speculative = speculative;
    leave(&out);
    promise.set_value(out);
    return out;
  } catch (...) {
    leave(nullptr);
    promise.set_exception(std::current_exception());
    throw;
  }
}

BenchWorker& CandidatePipeline::bench() {
  if (!bench_) bench_.emplace(settings_.bench, settings_.isolation.candidate_timeout_s);
  return *bench_;
}

void CandidatePipeline::prepare_bench() {
  const auto start = std::chrono::steady_clock::now();
  bench().prepare();
  std::lock_guard lock(mutex_);
  stats_.setup_s += seconds_since(start);
}

TrialOutcome CandidatePipeline::measure(const std::string& config_key,
                                        const CompileOutcome& compiled, double predicted_us,
                                        double stop_above_us) {
  const auto start = std::chrono::steady_clock::now();
  TrialOutcome out = bench().measure(config_key, *compiled.record, predicted_us, stop_above_us);
  add_measure_time(start);
  // The kernel faulted, broke the context or hung on the device: blocklisted for it.
  if (cache::is_crash(out.status)) blocklist(config_key, compiled, out.status, out.detail);
  return out;
}

bool CandidatePipeline::remeasure(const std::vector<std::string>& config_keys,
                                  const std::vector<const cache::CubinRecord*>& cubins,
                                  const std::vector<double>& predicted_us,
                                  std::vector<Timing*>& timings, int rounds) {
  const auto start = std::chrono::steady_clock::now();
  const bool done = bench().remeasure(config_keys, cubins, predicted_us, timings, rounds);
  add_measure_time(start);
  return done;
}

void CandidatePipeline::add_measure_time(std::chrono::steady_clock::time_point start) {
  std::lock_guard lock(mutex_);
  stats_.measure_busy_s += seconds_since(start);
}

PipelineStats CandidatePipeline::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

int CandidatePipeline::num_worker_restarts() const {
  return compiler_.num_worker_restarts() + (bench_ ? bench_->num_worker_restarts() : 0);
}

void CandidatePipeline::blocklist(const std::string& config_key, const CompileOutcome& compiled,
                                  cache::Status reason, const std::string& detail) {
  cache::BlocklistEntry e;
  e.device_fingerprint = settings_.key.device_fingerprint;
  e.compile_key = compiled.compile_key;
  e.nvrtc_version = compiled.record ? compiled.record->nvrtc_version : gen::nvrtc().version_string;
  e.template_version = settings_.key.template_version;
  e.op = settings_.op;
  e.config_key = config_key;
  e.kernel = compiled.kernel;
  e.problem_key = settings_.key.problem_key;
  e.reason = reason;
  e.detail = detail;
  e.run_id = ledger_.run_id();
  db_.add_to_blocklist(e);
  logger().warn("blocklisted config={} reason={} device=\"{}\"", config_key,
                cache::to_string(reason), e.device_fingerprint);
}

}  // namespace kt::tune
