// Small text helpers for keys and command-line values.
#include "core/text.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/error.hpp"

namespace kt {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

std::int64_t parse_int(std::string_view text, const std::string& what) {
  std::int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty()) throw_invalid(fmt::format("{} is empty: expected an integer", what));
  if (ec == std::errc::result_out_of_range)
    throw_invalid(fmt::format("{} = '{}' is out of range", what, text));
  if (ec != std::errc() || ptr != last)
    throw_invalid(fmt::format("{} = '{}' is not an integer", what, text));
  return value;
}

double parse_real(std::string_view text, const std::string& what) {
  double value = 0;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, value);
  if (text.empty()) throw_invalid(fmt::format("{} is empty: expected a number", what));
  if (ec != std::errc() || ptr != last)
    throw_invalid(fmt::format("{} = '{}' is not a number", what, text));
  return value;
}

void parse_key_fields(std::string_view key, const std::vector<std::string_view>& parts,
                      std::initializer_list<std::pair<std::string_view, int*>> fields,
                      const char* hint) {
  std::size_t i = 1;
  for (const auto& [prefix, value] : fields) {
    const std::string_view part = parts[i];
    if (part.substr(0, prefix.size()) != prefix)
      throw_invalid(fmt::format("config key '{}': field {} should start with '{}'; {}", key, i,
                                prefix, hint));
    const std::int64_t v =
        parse_int(part.substr(prefix.size()), fmt::format("config field '{}'", prefix));
    if (v < 1 || v > 4096)
      throw_invalid(fmt::format("config field '{}' = {} is out of range", prefix, v));
    *value = int(v);
    ++i;
  }
}

}  // namespace kt
