// Tuning runs written as they go, and resumed.
#include "tuner/run_ledger.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "core/log.hpp"

namespace kt::tune {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

bool run_owner_alive(std::int64_t pid, const std::string& host) {
  if (host != this_host()) return true;
  if (pid <= 0) return false;
  return ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
}

RunLedger::RunLedger(cache::Database& db, const cache::TuningKey& key,
                     const std::string& options_sha256, const std::string& fresh_run_id,
                     bool predicted, double flops)
    : db_(db), key_(key), predicted_(predicted), flops_(flops) {
  const std::int64_t pid = getpid();
  const std::string host = this_host();
  for (const cache::TuningRun& run : db.unfinished_runs(key, options_sha256)) {
    if (run_owner_alive(run.pid, run.host)) continue;
    if (!db.claim_run(run.run_id, run.pid, run.host, pid, host)) continue;
    run_id_ = run.run_id;
    resumed_ = true;
    break;
  }
  if (!resumed_) {
    run_id_ = fresh_run_id;
    cache::TuningRun run;
    run.run_id = run_id_;
    run.key = key;
    run.options_sha256 = options_sha256;
    run.pid = pid;
    run.host = host;
    db.begin_run(run);
    return;
  }
  for (cache::Measurement& m : db.measurements(key)) {
    if (m.run_id != run_id_ || m.detail.rfind(kFinalistDetail, 0) == 0) continue;
    const std::string config_key = m.config_key;
    prior_[config_key] = std::move(m);
    recorded_[config_key] = true;
  }
  logger().info("tuning run resumed run_id={} problem={} rows_kept={}", run_id_, key.problem_key,
                prior_.size());
}

std::optional<cache::Measurement> RunLedger::prior(const std::string& config_key) const {
  std::lock_guard lock(mutex_);
  const auto found = prior_.find(config_key);
  if (found == prior_.end()) return std::nullopt;
  return found->second;
}

cache::Measurement RunLedger::to_measurement(const CandidateRow& r) const {
  cache::Measurement m;
  m.key = key_;
  m.config_key = r.config_key;
  m.status = predicted_ && r.status == cache::Status::kOk ? cache::Status::kPredicted : r.status;
  m.predicted_us = r.predicted_us;
  m.median_us = predicted_ ? r.predicted_us : (r.timing ? r.timing->median_us : 0.0);
  m.spread_pct = r.timing ? r.timing->spread_pct() : 0;
  m.num_reps = r.timing ? r.timing->num_reps : 0;
  m.tflops = m.median_us > 0 ? flops_ / m.median_us / 1e6 : 0;
  m.detail = r.detail;
  m.run_id = run_id_;
  return m;
}

void RunLedger::record(const CandidateRow& row) {
  {
    std::lock_guard lock(mutex_);
    if (recorded_[row.config_key]) return;
    recorded_[row.config_key] = true;
  }
  db_.add_measurements({to_measurement(row)});
}

void RunLedger::finish(const std::vector<CandidateRow>& finalists,
                       const std::optional<CandidateRow>& winner) {
  std::vector<cache::Measurement> rows;
  for (const CandidateRow& f : finalists) {
    cache::Measurement m = to_measurement(f);
    m.detail = kFinalistDetail;
    rows.push_back(std::move(m));
  }
  std::optional<cache::Winner> w;
  if (winner) {
    w.emplace();
    w->key = key_;
    w->config_key = winner->config_key;
    w->median_us = to_measurement(*winner).median_us;
    w->predicted = predicted_;
    w->run_id = run_id_;
  }
  db_.finish_run(run_id_, rows, w);
}

}  // namespace kt::tune
