// Integer arithmetic the configs, models and occupancy share: how many tiles (of size b) cover a
// length a.
#pragma once

#include <cstdint>

namespace kt {

// ceil(a / b) for a >= 0, b > 0: the tiles of size b that cover a.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace kt
