// Writes a tuning run's outcome: one measurement row per candidate (measured, predicted or
// failed with its reason) and the winner, the same way for every op.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <cstdint>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "runtime/context.hpp"
#include "tuner/benchmark.hpp"

namespace kt::tune {

// What every tuning run starts with: the device (the GPU bound for measuring, or the profile
// when predicting), a run id, and the seed of its random inputs.
class TuningSession {
 public:
  // run_id empty: a fresh one; seed 0: one from the clock.
  TuningSession(bool predict_only, const DeviceDesc& profile, int device_ordinal,
                const std::string& run_id, std::uint64_t seed);
  const DeviceDesc& device() const { return device_; }
  const std::string& run_id() const { return run_id_; }
  std::uint64_t seed() const { return seed_; }

 private:
  std::optional<rt::BoundContext> context_;
  DeviceDesc device_;
  std::string run_id_;
  std::uint64_t seed_;
};

// Seconds of wall time since `start`.
double seconds_since(std::chrono::steady_clock::time_point start);

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
