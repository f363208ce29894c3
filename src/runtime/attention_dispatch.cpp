// Attention dispatch grades: exact tuned problem -> nearest tuned problems re-scored -> model.
#include "runtime/attention_dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/versions.hpp"

namespace kt::rt {

namespace {

constexpr std::size_t kNearestProblems = 8;

double log_distance(const AttentionProblem& a, const AttentionProblem& b) {
  auto d = [](std::int64_t x, std::int64_t y) {
    return std::log2(double(x)) - std::log2(double(y));
  };
  return std::hypot(
      std::hypot(d(a.batch * a.heads_q, b.batch * b.heads_q), d(a.seqlen_q, b.seqlen_q)),
      d(a.seqlen_k, b.seqlen_k));
}

// Tuned problems share a key prefix when dtype matches; head_dim and mask are compared parsed.
std::string key_prefix(const AttentionProblem& p) {
  return fmt::format("attn:{}:", to_string(p.dtype));
}

}  // namespace

std::vector<AttentionConfig> model_ranked_attention_configs(const AttentionProblem& p,
                                                            const DeviceDesc& device,
                                                            std::size_t count) {
  std::vector<AttentionConfig> out;
  for (const auto& r : rank_by_model(p, enumerate_attention_configs(p, device), device)) {
    out.push_back(r.config);
    if (out.size() >= count) break;
  }
  if (out.empty())
    throw Error(ErrorKind::kUnsupported,
                fmt::format("no attention config fits {} on {}", to_key(p), device.name));
  return out;
}

namespace {

// A stored winner's config and problem, or nothing (logged) for a row whose key does not parse:
// one bad row never fails dispatch.
std::optional<AttentionConfig> parsed_config(const cache::Winner& w) {
  try {
    return parse_attention_config_key(w.config_key);
  } catch (const Error& error) {
    logger().warn("stored winner skipped problem={} error=\"{}\"",
                  cache::printable(w.key.problem_key), cache::printable(error.what()));
    return std::nullopt;
  }
}

std::optional<AttentionProblem> parsed_problem(const cache::Winner& w) {
  try {
    return parse_attention_key(w.key.problem_key);
  } catch (const Error& error) {
    logger().warn("stored winner skipped error=\"{}\"", cache::printable(error.what()));
    return std::nullopt;
  }
}

}  // namespace

AttentionChoice choose_attention_config(const cache::Database* db, const AttentionProblem& p,
                                        const DeviceDesc& device) {
  if (db != nullptr) {
    const cache::TuningKey key{to_key(p), device.fingerprint(), kBenchmarkProtocolVersion,
                               kAttentionTemplateVersion};
    if (auto winner = db->find_winner(key)) {
      const std::optional<AttentionConfig> c = parsed_config(*winner);
      if (c && !validate(p, *c, device))
        return {*c, DispatchGrade::kExact, key.problem_key, winner->predicted};
    }
    std::vector<std::pair<double, cache::Winner>> near;
    for (auto& w : db->winners_with_prefix(device.fingerprint(), key_prefix(p),
                                           kBenchmarkProtocolVersion, kAttentionTemplateVersion)) {
      const std::optional<AttentionProblem> parsed = parsed_problem(w);
      if (!parsed) continue;
      const AttentionProblem& tuned = *parsed;
      if (tuned.head_dim != p.head_dim || tuned.causal != p.causal) continue;
      near.emplace_back(log_distance(p, tuned), std::move(w));
    }
    std::sort(near.begin(), near.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    if (near.size() > kNearestProblems) near.resize(kNearestProblems);
    std::optional<AttentionChoice> best;
    double best_us = 0;
    for (const auto& [distance, w] : near) {
      const std::optional<AttentionConfig> c = parsed_config(w);
      if (!c || validate(p, *c, device)) continue;
      const double us = estimate(p, *c, device).predicted_us;
      if (!best || us < best_us) {
        best = AttentionChoice{*c, DispatchGrade::kNearestShape, w.key.problem_key, w.predicted};
        best_us = us;
      }
    }
    if (best) return *best;
  }
  return {model_ranked_attention_configs(p, device, 1).front(), DispatchGrade::kModelDefault, "",
          true};
}

}  // namespace kt::rt
