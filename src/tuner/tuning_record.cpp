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
  // The second it started and 64 random bits: the runs of one second must not collide (a CLI
  // call tunes each shape as a run of its own, and a warm predict-only call takes 20 ms); 16
  // bits did, in about one of ten runs of the resume-after-kill test.
  if (run_id_.empty()) {
    std::random_device rd;
    const std::uint64_t random = std::uint64_t(rd()) << 32 | rd();
    run_id_ = fmt::format("{:x}-{:016x}",
                          std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count(),
                          random);
  }
  if (seed_ == 0)
    seed_ = std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
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
