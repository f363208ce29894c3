// The checks of the CLI's problem options that every op's problem_key shares.
#include "core/op_spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace kt {

bool take_flag(const ShapeOptions& options, std::string_view op, std::string_view flag) {
  if (flag.empty()) {
    take_flags(options, op, {});
    return false;
  }
  return take_flags(options, op, {flag}).front();
}

std::vector<bool> take_flags(const ShapeOptions& options, std::string_view op,
                             const std::vector<std::string_view>& flags) {
  std::vector<bool> given(flags.size(), false);
  for (const std::string& f : options.flags) {
    const auto it = std::find(flags.begin(), flags.end(), f);
    if (it == flags.end()) throw_invalid(fmt::format("{} takes no --{}", op, f));
    given[std::size_t(it - flags.begin())] = true;
  }
  return given;
}

}  // namespace kt
