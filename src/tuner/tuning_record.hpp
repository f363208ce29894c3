// What every tuning run shares, whatever the op: its session (device, run id, seed) and the row
// a candidate becomes (measured, predicted or failed with its reason; run_ledger.hpp writes it).
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

}  // namespace kt::tune
