// The checks a row passes before it is stored by import or merge, or a cubin before it is
// loaded, and the escaping of database text for a terminal.
#include "cache/row_checks.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cache/cubin_image.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/sha256.hpp"

namespace kt::cache {

namespace {

// The reason the keys of a row are unusable, or "": its problem key must belong to a registered
// op (core/op_registry.hpp) and parse, its config key parse as one of that op's.
std::string key_problem(const TuningKey& key, const std::string& config_key) {
  try {
    const OpSpec& op = op_spec_for_key(key.problem_key);
    op.summarize(key.problem_key);
    op.check_config_key(config_key);
  } catch (const Error& error) {
    return printable(error.what());
  }
  if (key.device_fingerprint.empty()) return "the device fingerprint is empty";
  if (key.protocol_version <= 0 || key.template_version <= 0)
    return fmt::format("versions must be positive (protocol {}, template {})", key.protocol_version,
                       key.template_version);
  return "";
}

bool finite_positive(double value) { return std::isfinite(value) && value > 0; }
bool nan_or_not_negative(double value) {
  return std::isnan(value) || (std::isfinite(value) && value >= 0);
}

}  // namespace

std::string measurement_problem(const Measurement& m) {
  if (std::string problem = key_problem(m.key, m.config_key); !problem.empty()) return problem;
  const bool timed = m.status == Status::kOk || m.status == Status::kPredicted;
  if (timed && !finite_positive(m.median_us))
    return fmt::format("median_us = {} for a {} row: a time must be finite and positive",
                       m.median_us, to_string(m.status));
  if (!timed && !nan_or_not_negative(m.median_us))
    return fmt::format("median_us = {}: a time must be finite and not negative", m.median_us);
  if (!nan_or_not_negative(m.predicted_us))
    return fmt::format("predicted_us = {}: a time must be finite and not negative", m.predicted_us);
  if (m.num_reps < 0 || m.sm_clock_mhz < 0)
    return fmt::format("num_reps = {}, sm_clock_mhz = {}: counts cannot be negative", m.num_reps,
                       m.sm_clock_mhz);
  return "";
}

std::string winner_problem(const Winner& w) {
  if (std::string problem = key_problem(w.key, w.config_key); !problem.empty()) return problem;
  if (!finite_positive(w.median_us))
    return fmt::format("median_us = {}: a winner's time must be finite and positive", w.median_us);
  return "";
}

std::string cubin_sha256(const std::vector<char>& bytes) {
  return sha256_hex(std::string_view(bytes.data(), bytes.size()));
}

std::string cubin_problem(const CubinRecord& r) {
  if (r.compile_key.size() != 64 ||
      r.compile_key.find_first_not_of("0123456789abcdef") != std::string::npos)
    return fmt::format("compile key '{}' is not 64 lowercase hex digits", printable(r.compile_key));
  if (!r.source_key.empty() &&
      (r.source_key.size() != 64 ||
       r.source_key.find_first_not_of("0123456789abcdef") != std::string::npos))
    return fmt::format("source key '{}' is neither empty nor 64 lowercase hex digits",
                       printable(r.source_key));
  if (r.name_expressions.size() != r.lowered_names.size())
    return fmt::format("{} name expressions but {} lowered names", r.name_expressions.size(),
                       r.lowered_names.size());
  for (const auto* names : {&r.name_expressions, &r.lowered_names})
    for (const std::string& name : *names)
      if (name.empty() || name.find('\n') != std::string::npos)
        return fmt::format("name '{}' is empty or holds a newline", printable(name));
  for (std::size_t i = 0; i < r.lowered_names.size(); ++i) {
    if (demangled_expression(r.lowered_names[i]) != r.name_expressions[i])
      return fmt::format("lowered name '{}' is not the kernel '{}'", printable(r.lowered_names[i]),
                         printable(r.name_expressions[i]));
  }
  if (r.cubin_sha256 != cubin_sha256(r.cubin))
    return fmt::format("the SHA-256 of its {} bytes is not the one stored with them ({})",
                       r.cubin.size(), printable(r.cubin_sha256));
  if (std::string problem = cubin_image_problem(r.cubin, r.lowered_names); !problem.empty())
    return "the bytes are not a usable cubin: " + problem;
  return "";
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&out](unsigned char byte) { out += fmt::format("\\x{:02x}", byte); };
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\t') || byte == 0x7f) {
        escape(byte);
      } else {
        out += static_cast<char>(byte);
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence passes, except the C1 controls U+0080..U+009F; anything else
    // is escaped byte by byte.
    const std::size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 0;
    bool whole = length != 0 && byte < 0xf5 && i + length <= text.size();
    for (std::size_t k = 1; whole && k < length; ++k)
      whole = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (whole && byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) whole = false;
    if (!whole) {
      escape(byte);
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace kt::cache
