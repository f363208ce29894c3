// Dispatch grades for every op: exact -> nearest tuned problems re-scored -> model default.
#include "runtime/op_dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/versions.hpp"

namespace kt::rt {

namespace {

constexpr std::size_t kNearestProblems = 8;

bool usable(const OpSpec& op, const std::string& problem_key, const std::string& config_key,
            const DeviceDesc& device, std::int64_t max_workspace) {
  return !op.validate_config(problem_key, config_key, device) &&
         op.workspace_bytes(problem_key, config_key, device) <= max_workspace;
}

}  // namespace

const char* to_string(DispatchGrade grade) {
  switch (grade) {
    case DispatchGrade::kExact:
      return "exact";
    case DispatchGrade::kNearestShape:
      return "nearest-shape";
    case DispatchGrade::kModelDefault:
      return "model-default";
    case DispatchGrade::kFallback:
      return "fallback";
  }
  return "?";
}

std::int64_t workspace_cap_for(const OpSpec& op, const std::string& problem_key,
                               const DeviceDesc& device, std::int64_t cap_bytes) {
  return std::max(cap_bytes, op.required_workspace_bytes(problem_key, device));
}

std::vector<std::string> model_ranked_configs(const OpSpec& op, const std::string& problem_key,
                                              const DeviceDesc& device, std::int64_t max_workspace,
                                              std::size_t count) {
  std::vector<std::string> out;
  for (const RankedConfigKey& r : op.ranked_configs(problem_key, device)) {
    if (op.workspace_bytes(problem_key, r.config_key, device) > max_workspace) continue;
    out.push_back(r.config_key);
    if (out.size() >= count) break;
  }
  if (out.empty())
    throw Error(ErrorKind::kUnsupported,
                fmt::format("no {} config fits {} on {}", op.name(), problem_key, device.name));
  return out;
}

DispatchChoice choose_config(const cache::Database* db, const OpSpec& op,
                             const std::string& problem_key, const DeviceDesc& device,
                             std::int64_t max_workspace) {
  if (db != nullptr) {
    const cache::TuningKey key{problem_key, device.fingerprint(), kBenchmarkProtocolVersion,
                               op.template_version()};
    if (auto winner = db->find_winner(key)) {
      if (usable(op, problem_key, winner->config_key, device, max_workspace))
        return {winner->config_key, DispatchGrade::kExact, problem_key, winner->predicted};
      logger().warn("tuned config {} for {} is not usable here; falling back", winner->config_key,
                    problem_key);
    }
    // A stored row that does not parse is skipped here, never fatal: it says nothing of this
    // problem.
    std::vector<std::pair<double, cache::Winner>> near;
    for (auto& w : db->winners_with_prefix(device.fingerprint(), op.neighbour_prefix(problem_key),
                                           kBenchmarkProtocolVersion, op.template_version())) {
      try {
        if (auto d = op.distance(problem_key, w.key.problem_key))
          near.emplace_back(*d, std::move(w));
      } catch (const Error& e) {
        logger().debug("skipping tuned row {}: {}", w.key.problem_key, e.what());
      }
    }
    std::stable_sort(near.begin(), near.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (near.size() > kNearestProblems) near.resize(kNearestProblems);
    std::optional<DispatchChoice> best;
    double best_us = 0;
    for (const auto& [distance, w] : near) {
      if (!usable(op, problem_key, w.config_key, device, max_workspace)) continue;
      const double us = op.predicted_us(problem_key, w.config_key, device);
      if (!best || us < best_us) {
        best = DispatchChoice{w.config_key, DispatchGrade::kNearestShape, w.key.problem_key,
                              w.predicted};
        best_us = us;
      }
    }
    if (best) return *best;
  }
  return {model_ranked_configs(op, problem_key, device, max_workspace, 1).front(),
          DispatchGrade::kModelDefault, "", true};
}

}  // namespace kt::rt
