// Small text helpers for keys and command-line values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kt {

std::vector<std::string_view> split(std::string_view text, char separator);

// Parses a whole decimal integer; throws kt::Error naming `what` on anything else
// (empty, sign garbage, trailing characters, overflow of int64).
std::int64_t parse_int(std::string_view text, const std::string& what);

}  // namespace kt
