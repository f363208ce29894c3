// The model calibrated against the database's own measurements, before a problem's search: the
// measured rows of the nearest problems of the same op tuned on this device (OpSpec::distance)
// give each config family (the key's first field: sm90, fa3, ...) a factor on the model's time,
// so that a family the model misjudges on this GPU moves in the ranking. Within a family the
// model's order stands; a problem's overall bias cancels (each residual is taken relative to
// its problem's median). Rows of every protocol and template version count, so importing an
// export (`kerntune cache import`) reproduces a calibration exactly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_spec.hpp"

namespace kt::tune {

// The nearest tuned problems a calibration reads, the rows a factor is shrunk by (a family's
// factor is exp(median residual x n / (n + kCalibrationShrinkRows))), and the problems a family
// must be measured in for a factor at all.
inline constexpr int kCalibrationProblems = 8;
inline constexpr int kCalibrationShrinkRows = 8;
inline constexpr int kCalibrationMinProblems = 2;

// The family of a config key: its text up to the first '.' (every op's keys open with one of
// OpSpec::families()).
std::string_view config_family(std::string_view config_key);

struct FamilyFactor {
  std::string family;
  double factor = 1;     // measured / model, relative to the family mix of each problem
  int num_rows = 0;      // measured configs it rests on
  int num_problems = 0;  // problems they were measured in
};

class ModelCalibration {
 public:
  ModelCalibration() = default;  // no factors: the model as it is

  // Fits the factors for `problem_key` from `rows` (Database::measured_with_prefix of the
  // device and the op's key prefix): rows of the problem itself, finalists' re-measurements and
  // configs the model rejects for their problem on `device` are left out; each (problem,
  // config) counts once, by the median of its rows.
  static ModelCalibration fit(const OpSpec& op, std::string_view problem_key,
                              const DeviceDesc& device,
                              const std::vector<cache::Measurement>& rows);

  // The factor of the config's family (1 when none was fitted).
  double factor(std::string_view config_key) const;
  // Scales every predicted time by its factor and re-sorts, stably, fastest first.
  void apply(std::vector<RankedConfigKey>& ranked) const;

  const std::vector<FamilyFactor>& factors() const { return factors_; }
  // "sm90 x0.98 (212 rows, 8 problems), smallm x1.06 (40 rows, 3 problems)"; empty without
  // factors.
  std::string summary() const;

 private:
  std::vector<FamilyFactor> factors_;
};

}  // namespace kt::tune
