// A sample of a bundle's measured winners timed again where they were measured: a read-only
// runtime that may not compile serves each sampled problem from the bundle (it must dispatch the
// winner, exactly), the op's bench facet times it on fresh random inputs and checks the output,
// and the median is compared with the stored one. Catches a bundle whose timings no longer hold
// on this machine (another driver, clocks, a damaged cubin) before it ships.
#pragma once

#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"

namespace kt::fleet {

struct RemeasureOptions {
  int count = 3;            // winners sampled (0: none)
  double tolerance = 0.15;  // a median this much slower than the stored one fails
};

struct Remeasured {
  std::string problem_key;
  std::string config_key;
  double stored_us = 0;
  double measured_us = 0;  // 0 when it could not be timed (`failure` says why)
  std::string failure;     // empty when it passed
  std::string skipped;     // why it was not timed (its op has no bench facet in C++)
};

// The winners measured on `gpu` (its fingerprint), not predicted, sorted by problem key.
std::vector<cache::Winner> remeasurable_winners(const cache::Database& db, const DeviceDesc& gpu);

// `count` of `winners` spread evenly over them, each timed through a runtime on `bundle_path`.
// Needs a current context on `gpu`.
std::vector<Remeasured> remeasure_sample(const std::string& bundle_path,
                                         const std::vector<cache::Winner>& winners,
                                         const RemeasureOptions& options);

}  // namespace kt::fleet
