// Fitting and applying the model's per-family calibration.
#include "tuner/model_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/run_ledger.hpp"

namespace kt::tune {

namespace {

double median(std::vector<double> values) { return summarize(std::move(values)).median_us; }

// One problem's measured configs: config key → measured medians.
using ProblemRows = std::map<std::string, std::vector<double>>;

}  // namespace

std::string_view config_family(std::string_view config_key) {
  return config_key.substr(0, config_key.find('.'));
}

ModelCalibration ModelCalibration::fit(const OpSpec& op, std::string_view problem_key,
                                       const DeviceDesc& device,
                                       const std::vector<cache::Measurement>& rows) {
  std::map<std::string, ProblemRows> by_problem;
  for (const cache::Measurement& m : rows) {
    if (m.status != cache::Status::kOk || m.key.problem_key == problem_key) continue;
    if (!(m.median_us > 0) || m.detail == kFinalistDetail) continue;
    by_problem[m.key.problem_key][m.config_key].push_back(m.median_us);
  }
  // The nearest problems first (a config of one says nothing of a problem at no distance).
  std::vector<std::pair<double, const std::string*>> nearest;
  for (const auto& [problem, configs] : by_problem) {
    try {
      if (const std::optional<double> d = op.distance(problem_key, problem))
        nearest.emplace_back(*d, &problem);
    } catch (const Error&) {
      // A problem key this build cannot read (an export of another version) calibrates nothing.
    }
  }
  std::stable_sort(nearest.begin(), nearest.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  // Each family's residuals log(measured / model), relative to their problem's median.
  std::map<std::string, std::vector<double>, std::less<>> residuals;
  std::map<std::string, std::set<std::string>, std::less<>> problems;
  int used = 0;
  for (const auto& [distance, problem] : nearest) {
    if (used == kCalibrationProblems) break;
    std::vector<std::pair<std::string, double>> logs;
    for (const auto& [config, medians] : by_problem[*problem]) {
      if (op.validate_config(*problem, config, device)) continue;
      double model_us = 0;
      try {
        model_us = op.predicted_us(*problem, config, device);
      } catch (const Error&) {
        continue;
      }
      if (!(model_us > 0)) continue;
      logs.emplace_back(config, std::log(median(medians) / model_us));
    }
    if (logs.empty()) continue;
    ++used;
    std::vector<double> all;
    for (const auto& l : logs) all.push_back(l.second);
    const double center = median(all);
    for (const auto& [config, value] : logs) {
      const std::string family(config_family(config));
      residuals[family].push_back(value - center);
      problems[family].insert(*problem);
    }
  }

  ModelCalibration out;
  for (const auto& [family, values] : residuals) {
    const int num_problems = int(problems[family].size());
    if (num_problems < kCalibrationMinProblems) continue;
    const double n = double(values.size());
    const double shrunk = median(values) * n / (n + kCalibrationShrinkRows);
    out.factors_.push_back({family, std::exp(shrunk), int(values.size()), num_problems});
  }
  return out;
}

double ModelCalibration::factor(std::string_view config_key) const {
  const std::string_view family = config_family(config_key);
  for (const FamilyFactor& f : factors_)
    if (f.family == family) return f.factor;
  return 1.0;
}

void ModelCalibration::apply(std::vector<RankedConfigKey>& ranked) const {
  if (factors_.empty()) return;
  for (RankedConfigKey& r : ranked) r.predicted_us *= factor(r.config_key);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedConfigKey& a, const RankedConfigKey& b) {
                     return a.predicted_us < b.predicted_us;
                   });
}

std::string ModelCalibration::summary() const {
  std::vector<std::string> parts;
  for (const FamilyFactor& f : factors_)
    parts.push_back(fmt::format("{} x{:.3f} ({} rows, {} problems)", f.family, f.factor, f.num_rows,
                                f.num_problems));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace kt::tune
