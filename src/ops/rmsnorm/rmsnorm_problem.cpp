// RMSNorm problem keys, the CLI shape syntax and validation.
#include "ops/rmsnorm/rmsnorm_problem.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kt {

namespace {

constexpr std::int64_t kMaxHidden = 65536;
constexpr std::int64_t kMaxElements = std::int64_t(1) << 40;

}  // namespace

double RmsnormProblem::min_bytes() const {
  const double element = double(size_bytes(dtype));
  const double row_streams = residual ? 4 : 2;  // x, y (+ r, the sum)
  return element * (row_streams * double(rows) * double(hidden) + double(hidden));
}

double RmsnormProblem::flops() const {
  return (residual ? 5.0 : 4.0) * double(rows) * double(hidden);
}

void validate(const RmsnormProblem& p) {
  if (p.rows < 1) throw_invalid(fmt::format("RMSNorm rows must be >= 1, got {}", p.rows));
  if (p.hidden < 1) throw_invalid(fmt::format("RMSNorm hidden must be >= 1, got {}", p.hidden));
  if (p.hidden > kMaxHidden)
    throw_invalid(fmt::format("RMSNorm hidden {} is over the supported {}", p.hidden, kMaxHidden));
  if (p.rows > kMaxElements / p.hidden)
    throw_invalid(
        fmt::format("RMSNorm rows x hidden = {} x {} is over 2^40 elements", p.rows, p.hidden));
  if (p.dtype != DType::kBF16 && p.dtype != DType::kFP16)
    throw_invalid(fmt::format("RMSNorm dtype must be bf16 or fp16, got {}", to_string(p.dtype)));
}

std::string to_key(const RmsnormProblem& p) {
  return fmt::format("rmsnorm:{}:r{}.h{}{}", to_string(p.dtype), p.rows, p.hidden,
                     p.residual ? ".res" : "");
}

RmsnormProblem parse_rmsnorm_key(std::string_view key) {
  const auto bad = [&](std::string_view why) {
    throw_invalid(
        fmt::format("RMSNorm problem key '{}' {}; expected e.g. "
                    "rmsnorm:bf16:r8192.h4096 or rmsnorm:fp16:r1.h13.res",
                    key, why));
  };
  const std::vector<std::string_view> parts = split(key, ':');
  if (parts.size() != 3 || parts[0] != "rmsnorm") bad("is not rmsnorm:DTYPE:SHAPE");
  RmsnormProblem p;
  p.dtype = parse_dtype(parts[1]);
  std::vector<std::string_view> fields = split(parts[2], '.');
  if (!fields.empty() && fields.back() == "res") {
    p.residual = true;
    fields.pop_back();
  }
  if (fields.size() != 2 || !fields[0].starts_with('r') || !fields[1].starts_with('h'))
    bad("has no rROWS.hHIDDEN shape");
  p.rows = parse_int(fields[0].substr(1), "RMSNorm key rows");
  p.hidden = parse_int(fields[1].substr(1), "RMSNorm key hidden");
  validate(p);
  if (to_key(p) != key) bad("is not canonical");
  return p;
}

void parse_rmsnorm_shape(std::string_view shape, RmsnormProblem& p) {
  const char* hint = "expected e.g. rows=8192,hidden=4096";
  bool have_rows = false, have_hidden = false;
  for (std::string_view item : split(shape, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw_invalid(fmt::format("RMSNorm shape item '{}' is not NAME=VALUE; {}", item, hint));
    const std::string_view name = item.substr(0, eq);
    bool* have = name == "rows" ? &have_rows : name == "hidden" ? &have_hidden : nullptr;
    if (have == nullptr)
      throw_invalid(
          fmt::format("unknown RMSNorm shape field '{}': use rows and hidden; {}", name, hint));
    if (*have) throw_invalid(fmt::format("RMSNorm shape '{}' sets '{}' twice", shape, name));
    *have = true;
    const std::int64_t value =
        parse_int(item.substr(eq + 1), fmt::format("RMSNorm shape field '{}'", name));
    (name == "rows" ? p.rows : p.hidden) = value;
  }
  if (!have_rows) throw_invalid(fmt::format("RMSNorm shape '{}' has no rows=; {}", shape, hint));
  if (!have_hidden)
    throw_invalid(fmt::format("RMSNorm shape '{}' has no hidden=; {}", shape, hint));
  validate(p);
}

}  // namespace kt
