// Re-measuring a sample of a bundle's winners (bundle_remeasure.hpp).
#include "fleet/bundle_remeasure.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "kerntune/kerntune.hpp"
#include "tuner/op_tuning.hpp"

namespace kt::fleet {

std::vector<cache::Winner> remeasurable_winners(const cache::Database& db, const DeviceDesc& gpu) {
  std::vector<cache::Winner> out;
  for (const cache::Winner& w : db.all_winners())
    if (!w.predicted && w.key.device_fingerprint == gpu.fingerprint()) out.push_back(w);
  std::sort(out.begin(), out.end(), [](const cache::Winner& a, const cache::Winner& b) {
    return a.key.problem_key < b.key.problem_key;
  });
  return out;
}

namespace {

Remeasured remeasure_one(Runtime& runtime, const cache::Winner& w, double tolerance) {
  Remeasured r{w.key.problem_key, w.config_key, w.median_us};
  const OpEntry& op = OpRegistry::instance().by_key(w.key.problem_key);
  const DispatchInfo dispatch = runtime.prepare(w.key.problem_key);
  if (dispatch.config_key != w.config_key || dispatch.grade != "exact") {
    r.failure = fmt::format("the bundle serves {} ({}), not its winner", dispatch.config_key,
                            dispatch.grade);
    return r;
  }
  tune::OpBenchOptions options;
  options.baseline = false;
  options.rounds = 3;
  const tune::OpBenchRow row = op.tuning->bench(runtime, w.key.problem_key, options);
  r.measured_us = row.kerntune.median_us;
  if (!row.check.passed)
    r.failure = "its output fails the check: " + row.check.detail;
  else if (r.measured_us > w.median_us * (1 + tolerance))
    r.failure = fmt::format("{:.2f} us now, {:.0f}% slower than the {:.2f} us stored",
                            r.measured_us, 100 * (r.measured_us / w.median_us - 1), w.median_us);
  return r;
}

}  // namespace

std::vector<Remeasured> remeasure_sample(const std::string& bundle_path,
                                         const std::vector<cache::Winner>& winners,
                                         const RemeasureOptions& options) {
  const std::size_t n = std::min(winners.size(), std::size_t(std::max(options.count, 0)));
  if (n == 0) return {};
  RuntimeOptions ro;
  ro.database_path = bundle_path;
  ro.read_only = true;
  ro.compile_on_miss = false;  // as a machine without NVRTC serves it
  const std::unique_ptr<Runtime> runtime = Runtime::open(ro);
  std::vector<Remeasured> out;
  for (std::size_t i = 0; i < n; ++i) {
    const cache::Winner& w = winners[i * winners.size() / n];
    try {
      out.push_back(remeasure_one(*runtime, w, options.tolerance));
    } catch (const Error& e) {
      Remeasured r{w.key.problem_key, w.config_key, w.median_us};
      (e.kind() == ErrorKind::kUnsupported ? r.skipped : r.failure) =
          fmt::format("could not be timed: {}", e.what());
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace kt::fleet
