// JSON strings and numbers for --json output.
#include "tools/json_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kt::cli {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : "null";
}

}  // namespace kt::cli
