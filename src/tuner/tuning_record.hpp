// Writes a tuning run's outcome: one measurement row per candidate (measured, predicted or
// failed with its reason) and the winner, the same way for every op.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "tuner/benchmark.hpp"

namespace kt::tune {

struct CandidateRow {
  std::string config_key;
  cache::Status status = cache::Status::kOk;
  double predicted_us = 0;
  const Timing* timing = nullptr;  // measured candidates
  std::string detail;
};

// A kernel that spills registers to local memory is never shipped: it becomes kRejected with
// the spill size as its detail (it is still recorded, and compiled into the cache).
void reject_if_spilling(int spill_bytes, cache::Status& status, std::string& detail);

// predicted: the run ranked by the model (ok rows become kPredicted, times are the model's).
// winner: index into rows, if any candidate won.
void record_tuning(cache::Database& db, const cache::TuningKey& key, const std::string& run_id,
                   bool predicted, double flops, const std::vector<CandidateRow>& rows,
                   std::optional<std::size_t> winner);

}  // namespace kt::tune
