// Comparing two bundles' winners (bundle_diff.hpp).
#include "fleet/bundle_diff.hpp"

#include <cmath>
#include <map>
#include <tuple>

namespace kt::fleet {

namespace {

using KeyTuple = std::tuple<std::string, std::string, int, int>;

KeyTuple tuple_of(const cache::TuningKey& k) {
  return {k.device_fingerprint, k.problem_key, k.protocol_version, k.template_version};
}

// The fastest ok or predicted row of `config` for `key` in `db`, if any.
std::optional<double> time_of(const cache::Database& db, const cache::TuningKey& key,
                              const std::string& config) {
  std::optional<double> best;
  for (const cache::Measurement& m : db.measurements(key)) {
    if (m.config_key != config || !(m.median_us > 0)) continue;
    if (m.status != cache::Status::kOk && m.status != cache::Status::kPredicted) continue;
    if (!best || m.median_us < *best) best = m.median_us;
  }
  return best;
}

}  // namespace

std::optional<double> WinnerChange::ratio() const {
  if (!a || !b || !(a->median_us > 0) || !std::isfinite(b->median_us)) return std::nullopt;
  return b->median_us / a->median_us;
}

BundleDiff diff_bundles(const cache::Database& a, const cache::Database& b) {
  std::map<KeyTuple, WinnerChange> keys;
  for (cache::Winner& w : a.all_winners()) {
    WinnerChange& c = keys[tuple_of(w.key)];
    c.key = w.key;
    c.a = std::move(w);
  }
  for (cache::Winner& w : b.all_winners()) {
    WinnerChange& c = keys[tuple_of(w.key)];
    c.key = w.key;
    c.b = std::move(w);
  }
  BundleDiff diff;
  for (auto& [tuple, change] : keys) {
    if (change.a && change.b && change.a->config_key == change.b->config_key) {
      ++diff.num_same;
      continue;
    }
    if (change.a && change.b) {
      change.a_us_of_b_config = time_of(a, change.key, change.b->config_key);
      change.b_us_of_a_config = time_of(b, change.key, change.a->config_key);
    }
    diff.changes.push_back(std::move(change));
  }
  return diff;
}

}  // namespace kt::fleet
