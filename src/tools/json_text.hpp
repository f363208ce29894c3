// JSON text for the CLI's --json output: a string quoted and escaped per RFC 8259 (control
// characters as \u00XX), and a finite number or null. Callers compose objects with fmt.
#pragma once

#include <string>
#include <string_view>

namespace kt::cli {

std::string json_string(std::string_view text);
std::string json_number(double value);  // "null" for NaN and infinities (JSON has neither)

}  // namespace kt::cli
