// Recording a tuning run in the database.
#include "tuner/tuning_record.hpp"

#include <fmt/format.h>

#include <random>

#include "runtime/device_query.hpp"

namespace kt::tune {

TuningSession::TuningSession(bool predict_only, const DeviceDesc& profile, int device_ordinal,
                             const std::string& run_id, std::uint64_t seed)
    : device_(profile), run_id_(run_id), seed_(seed) {
  if (!predict_only) {
    context_.emplace(device_ordinal);
    device_ = rt::query_device(context_->device());
  }
  if (run_id_.empty()) {
    std::random_device rd;
    run_id_ = fmt::format("{:x}-{:04x}",
                          std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count(),
                          rd() & 0xffff);
  }
  if (seed_ == 0) seed_ = std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void reject_if_spilling(int spill_bytes, cache::Status& status, std::string& detail) {
  if (spill_bytes <= 0 || status != cache::Status::kOk) return;
  status = cache::Status::kRejected;
  detail = fmt::format("ptxas spills {} bytes to local memory; not measured", spill_bytes);
}

void record_tuning(cache::Database& db, const cache::TuningKey& key, const std::string& run_id,
                   bool predicted, double flops, const std::vector<CandidateRow>& rows,
                   std::optional<std::size_t> winner) {
  auto time_us = [predicted](const CandidateRow& r) {
    return predicted ? r.predicted_us : (r.timing ? r.timing->median_us : 0.0);
  };
  std::vector<cache::Measurement> out;
  for (const auto& r : rows) {
    cache::Measurement m;
    m.key = key;
    m.config_key = r.config_key;
    m.status = predicted && r.status == cache::Status::kOk ? cache::Status::kPredicted : r.status;
    m.predicted_us = r.predicted_us;
    m.median_us = time_us(r);
    m.spread_pct = r.timing ? r.timing->spread_pct() : 0;
    m.num_reps = r.timing ? r.timing->num_reps : 0;
    m.tflops = m.median_us > 0 ? flops / m.median_us / 1e6 : 0;
    m.detail = r.detail;
    m.run_id = run_id;
    out.push_back(std::move(m));
  }
  db.add_measurements(out);
  if (!winner) return;
  cache::Winner w;
  w.key = key;
  w.config_key = rows[*winner].config_key;
  w.median_us = time_us(rows[*winner]);
  w.predicted = predicted;
  w.run_id = run_id;
  db.set_winner(w);
}

}  // namespace kt::tune
