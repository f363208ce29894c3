// The tuning session and the spill rule.
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

}  // namespace kt::tune
