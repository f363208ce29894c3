// Small text helpers for keys and command-line values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kt {

std::vector<std::string_view> split(std::string_view text, char separator);

// Parses a whole decimal integer; throws kt::Error naming `what` on anything else
// (empty, sign garbage, trailing characters, overflow of int64).
std::int64_t parse_int(std::string_view text, const std::string& what);
// Parses a whole number as std::from_chars reads a double ("nan" and "inf" included); throws
// kt::Error naming `what` on anything else (empty, trailing characters).
double parse_real(std::string_view text, const std::string& what);

// Parses parts[1], parts[2], ... of the config key `key` (split at '.', parts[0] its family) as
// the fields of `fields` in order: each part is the field's prefix and an integer in [1, 4096],
// stored through its pointer. Throws kt::Error naming the key, the field and `hint` otherwise;
// parts must hold a part for every field.
void parse_key_fields(std::string_view key, const std::vector<std::string_view>& parts,
                      std::initializer_list<std::pair<std::string_view, int*>> fields,
                      const char* hint);

}  // namespace kt
