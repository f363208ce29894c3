// Dispatch grades: exact tuned shape -> nearest tuned shapes re-scored -> model default.
#include "runtime/gemm_dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "core/gemm_model.hpp"
#include "core/log.hpp"
#include "core/versions.hpp"

namespace kt::rt {

namespace {

constexpr std::size_t kNearestShapes = 8;

double log_distance(const GemmProblem& a, const GemmProblem& b) {
  auto d = [](std::int64_t x, std::int64_t y) {
    return std::log2(double(x)) - std::log2(double(y));
  };
  return std::hypot(d(a.m, b.m), d(a.n, b.n), d(a.k, b.k));
}

bool usable(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& device,
            std::int64_t max_workspace) {
  return !validate(p, c, device) && workspace_bytes(p, c, device.num_sms) <= max_workspace;
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
  }
  return "?";
}

std::vector<GemmConfig> model_ranked_configs(const GemmProblem& p, const DeviceDesc& device,
                                             std::int64_t max_workspace, std::size_t count) {
  std::vector<GemmConfig> out;
  for (const auto& ranked : rank_by_model(p, enumerate_gemm_configs(p, device), device)) {
    if (workspace_bytes(p, ranked.config, device.num_sms) > max_workspace) continue;
    out.push_back(ranked.config);
    if (out.size() >= count) break;
  }
  if (out.empty())
    throw Error(ErrorKind::kUnsupported,
                fmt::format("no GEMM config fits {} on {}", to_key(p), device.name));
  return out;
}

GemmConfig model_default_config(const GemmProblem& p, const DeviceDesc& device,
                                std::int64_t max_workspace) {
  return model_ranked_configs(p, device, max_workspace, 1).front();
}

namespace {

// A stored winner's config and problem, or nothing (logged) for a row whose key does not parse:
// one bad row never fails dispatch.
std::optional<GemmConfig> parsed_config(const cache::Winner& w) {
  try {
    return parse_gemm_config_key(w.config_key);
  } catch (const Error& error) {
    logger().warn("stored winner skipped problem={} error=\"{}\"",
                  cache::printable(w.key.problem_key), cache::printable(error.what()));
    return std::nullopt;
  }
}

std::optional<GemmProblem> parsed_problem(const cache::Winner& w) {
  try {
    return parse_gemm_key(w.key.problem_key);
  } catch (const Error& error) {
    logger().warn("stored winner skipped error=\"{}\"", cache::printable(error.what()));
    return std::nullopt;
  }
}

}  // namespace

GemmChoice choose_gemm_config(const cache::Database* db, const GemmProblem& p,
                              const DeviceDesc& device, std::int64_t max_workspace) {
  if (db != nullptr) {
    const cache::TuningKey key{to_key(p), device.fingerprint(), kBenchmarkProtocolVersion,
                               kGemmTemplateVersion};
    if (auto winner = db->find_winner(key)) {
      const std::optional<GemmConfig> c = parsed_config(*winner);
      if (c && usable(p, *c, device, max_workspace))
        return {*c, DispatchGrade::kExact, key.problem_key, winner->predicted};
      logger().warn("tuned config {} for {} is not usable here; falling back",
                    cache::printable(winner->config_key), key.problem_key);
    }
    const std::string prefix = fmt::format("gemm:{}:{}:{}:", to_string(p.in_dtype),
                                           to_string(p.out_dtype), to_string(p.layout));
    std::vector<cache::Winner> tuned = db->winners_with_prefix(
        device.fingerprint(), prefix, kBenchmarkProtocolVersion, kGemmTemplateVersion);
    std::vector<std::pair<double, const cache::Winner*>> by_distance;
    for (const auto& w : tuned) {
      if (const std::optional<GemmProblem> near = parsed_problem(w))
        by_distance.emplace_back(log_distance(p, *near), &w);
    }
    std::sort(by_distance.begin(), by_distance.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    if (by_distance.size() > kNearestShapes) by_distance.resize(kNearestShapes);
    std::optional<GemmChoice> best;
    double best_us = 0;
    for (const auto& [distance, w] : by_distance) {
      const std::optional<GemmConfig> c = parsed_config(*w);
      if (!c || !usable(p, *c, device, max_workspace)) continue;
      const double us = estimate(p, *c, device).predicted_us;
      if (!best || us < best_us) {
        best = GemmChoice{*c, DispatchGrade::kNearestShape, w->key.problem_key, w->predicted};
        best_us = us;
      }
    }
    if (best) return *best;
  }
  return {model_default_config(p, device, max_workspace), DispatchGrade::kModelDefault, "", true};
}

}  // namespace kt::rt
