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

}  // namespace kt
