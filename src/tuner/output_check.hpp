// The outcome of checking a candidate's output against the op's reference, for every op.
#pragma once

#include <cstdint>
#include <string>

namespace kt::tune {

struct OutputCheck {
  bool passed = false;
  double relative_error = 0;  // ||out - ref|| / ||ref|| over the samples
  double tolerance = 0;
  std::uint64_t nonfinite = 0;  // NaN/Inf anywhere in C (poison left = element not written)
  std::string detail;           // why it failed, for the database
};

}  // namespace kt::tune
