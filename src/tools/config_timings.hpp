// The measurement rows that stand for each config's time under one tuning key: of a config's rows
// with one status, the finalists' interleaved re-measurement where there is one (the winner was
// picked by it), else the latest. Shared by `explain` and `report`.
#pragma once

#include <vector>

#include "cache/database.hpp"

namespace kt::cli {

// One row per config among the rows of `rows` with status `status`, by config key.
std::vector<cache::Measurement> config_timings(std::vector<cache::Measurement> rows,
                                               cache::Status status);

}  // namespace kt::cli
