// The checks of the CLI's problem options that every op's problem_key shares.
#include "core/op_spec.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kt {

bool take_flag(const ShapeOptions& options, std::string_view op, std::string_view flag) {
  bool given = false;
  for (const std::string& f : options.flags) {
    if (flag.empty() || f != flag) throw_invalid(fmt::format("{} takes no --{}", op, f));
    given = true;
  }
  return given;
}

}  // namespace kt
