// A tuning run's record in the database, written as it goes so that a run killed at any moment
// (SIGKILL included) can be resumed: the run is a tuning_runs row; each candidate's row is
// committed the moment its outcome is known (one transaction); the finalists' re-measurements,
// the winner and the run's `done` mark are one last transaction. A new run of the same tuning
// key and options finds an unfinished run whose process is gone and continues it under the same
// run id, skipping the candidates that already have rows, so nothing is lost or written twice.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "tuner/tuning_record.hpp"

namespace kt::tune {

// The detail of the rows the finalists' interleaved re-measurement adds (a second measurement of
// a candidate, not a first-pass row).
inline constexpr const char* kFinalistDetail = "finalist: interleaved re-measurement";

// True when the process `pid` on `host` may still be running (another host: always true, as
// nothing can be known about it).
bool run_owner_alive(std::int64_t pid, const std::string& host);
std::string this_host();

class RunLedger {
 public:
  // Resumes the oldest unfinished run of `key` with `options_sha256` whose process is gone
  // (claimed atomically, so two resuming processes never share it), else begins a run with
  // `fresh_run_id`. predicted: rows of ok candidates are stored as kPredicted with the model's
  // time. flops: the problem's, for TFLOP/s.
  RunLedger(cache::Database& db, const cache::TuningKey& key, const std::string& options_sha256,
            const std::string& fresh_run_id, bool predicted, double flops);

  const std::string& run_id() const { return run_id_; }
  bool resumed() const { return resumed_; }
  int num_resumed_rows() const { return int(prior_.size()); }

  // This run's row for `config_key` from before a resume, if any.
  std::optional<cache::Measurement> prior(const std::string& config_key) const;
  // Commits the candidate's row now, unless this run already has one. Thread-safe.
  void record(const CandidateRow& row);
  // The finalists' rows, the winner (if any) and the run marked done, in one transaction.
  void finish(const std::vector<CandidateRow>& finalists,
              const std::optional<CandidateRow>& winner);

 private:
  cache::Measurement to_measurement(const CandidateRow& row) const;

  cache::Database& db_;
  cache::TuningKey key_;
  bool predicted_;
  double flops_;
  std::string run_id_;
  bool resumed_ = false;
  mutable std::mutex mutex_;  // guards prior_ and recorded_
  std::map<std::string, cache::Measurement> prior_;
  std::map<std::string, bool> recorded_;
};

}  // namespace kt::tune
