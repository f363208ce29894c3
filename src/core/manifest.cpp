// The fleet manifest's parser and writer (manifest.hpp). A line is whitespace-separated fields,
// a double-quoted field may hold spaces, and '#' outside quotes starts a comment.
#include "core/manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/sha256.hpp"
#include "core/text.hpp"
#include "core/types.hpp"

namespace kt {

namespace {

constexpr int kMaxCandidates = 4096;
constexpr int kMaxFinalists = 64;

struct Field {
  std::string text;
  bool quoted = false;
};

// Where parsing stands, for the messages: the source and line, and the field being read.
struct Place {
  const std::string& source;
  int line = 0;

  [[noreturn]] void fail(const std::string& reason) const {
    throw_invalid(fmt::format("{}:{}: {}", source, line, reason));
  }
  [[noreturn]] void fail(std::size_t field, const Field& f, const std::string& reason) const {
    throw_invalid(fmt::format("{}:{}: field {} '{}': {}", source, line, field + 1, f.text, reason));
  }
};

// The fields of one line, comments dropped. Throws for an unterminated quote.
std::vector<Field> split_fields(std::string_view line, const Place& place) {
  std::vector<Field> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') break;
    Field f;
    // A field runs to the next blank outside quotes; quotes group, and are not kept.
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
      if (line[i] == '#' && !f.quoted) break;
      if (line[i] == '"') {
        const std::size_t end = line.find('"', i + 1);
        if (end == std::string_view::npos) place.fail("a quote is not closed");
        f.text.append(line.substr(i + 1, end - i - 1));
        f.quoted = true;
        i = end + 1;
        continue;
      }
      f.text += line[i++];
    }
    fields.push_back(std::move(f));
    if (i < line.size() && line[i] == '#') break;
  }
  return fields;
}

// "name=value" split, or nullopt for a field without '='.
std::optional<std::pair<std::string, std::string>> option_of(const Field& f) {
  const std::size_t eq = f.text.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  return std::make_pair(f.text.substr(0, eq), f.text.substr(eq + 1));
}

int int_option(const Place& place, std::size_t index, const Field& f, const std::string& value,
               int low, int high) {
  std::int64_t n = 0;
  try {
    n = parse_int(value, "value");
  } catch (const Error&) {
    place.fail(index, f, "not a whole decimal number");
  }
  if (n < low || n > high) place.fail(index, f, fmt::format("out of range ({}-{})", low, high));
  return int(n);
}

ManifestDevice parse_device(const std::vector<Field>& fields, const Place& place) {
  if (fields.size() < 2)
    place.fail(
        fmt::format("a device line names a profile: device PROFILE [name=\"...\"] "
                    "[sms=N] [clock_mhz=N] (profiles: {})",
                    fmt::join(device_profile_names(), ", ")));
  ManifestDevice d;
  d.profile = fields[1].text;
  const auto names = device_profile_names();
  if (std::find(names.begin(), names.end(), d.profile) == names.end())
    place.fail(1, fields[1],
               fmt::format("no such device profile (profiles: {})", fmt::join(names, ", ")));
  for (std::size_t i = 2; i < fields.size(); ++i) {
    const auto option = option_of(fields[i]);
    if (!option) place.fail(i, fields[i], "expected name=\"...\", sms=N or clock_mhz=N");
    const auto& [key, value] = *option;
    if (key == "name") {
      if (value.empty() || value.find('/') != std::string::npos)
        place.fail(i, fields[i], "a device name is non-empty and holds no '/'");
      d.name = value;
    } else if (key == "sms") {
      d.num_sms = int_option(place, i, fields[i], value, 1, 1024);
    } else if (key == "clock_mhz") {
      d.sm_clock_mhz = int_option(place, i, fields[i], value, 100, 5000);
    } else {
      place.fail(i, fields[i], "unknown device option (name, sms, clock_mhz)");
    }
  }
  return d;
}

ManifestTuning parse_tuning(const std::vector<Field>& fields, const Place& place) {
  ManifestTuning t;
  for (std::size_t i = 1; i < fields.size(); ++i) {
    const auto option = option_of(fields[i]);
    if (!option) place.fail(i, fields[i], "expected candidates=N or finalists=N");
    const auto& [key, value] = *option;
    if (key == "candidates")
      t.candidates = int_option(place, i, fields[i], value, 0, kMaxCandidates);
    else if (key == "finalists")
      t.finalists = int_option(place, i, fields[i], value, 1, kMaxFinalists);
    else
      place.fail(i, fields[i], "unknown tune option (candidates, finalists)");
  }
  return t;
}

// "<op> <shape> [flag...] [dtype=..] [out-dtype=..] [layout=..]" -> the canonical key.
std::string parse_problem(const OpSpec& op, const std::vector<Field>& fields, const Place& place) {
  if (fields.size() < 2)
    place.fail(fmt::format("a {} problem needs its shape: {} {} (`kerntune ops` lists the syntax)",
                           op.name(), op.name(), op.shape_syntax()));
  ShapeOptions options;
  std::vector<std::string> op_flags;
  for (const OpFlag& flag : op.flags()) op_flags.push_back(flag.name);
  for (std::size_t i = 2; i < fields.size(); ++i) {
    const Field& f = fields[i];
    const auto option = option_of(f);
    if (!option) {
      if (std::find(op_flags.begin(), op_flags.end(), f.text) == op_flags.end())
        place.fail(i, f,
                   op_flags.empty() ? fmt::format("{} takes no flags", op.name())
                                    : fmt::format("not a flag of {} ({})", op.name(),
                                                  fmt::join(op_flags, ", ")));
      if (std::find(options.flags.begin(), options.flags.end(), f.text) != options.flags.end())
        place.fail(i, f, "given twice");
      options.flags.push_back(f.text);
      continue;
    }
    const auto& [key, value] = *option;
    try {
      if (key == "dtype")
        options.dtype = parse_dtype(value);
      else if (key == "out-dtype")
        options.out_dtype = parse_dtype(value);
      else if (key == "layout")
        options.layout = value;
      else
        place.fail(i, f, "unknown problem option (dtype, out-dtype, layout)");
    } catch (const Error& e) {
      place.fail(i, f, e.what());
    }
  }
  try {
    return op.problem_key(fields[1].text, options);
  } catch (const Error& e) {
    // The op's codec names what is wrong: an option it refuses (its message names the option)
    // is that field's fault, the rest the shape's.
    const std::string reason = e.what();
    for (std::size_t i = 2; i < fields.size(); ++i)
      if (const auto option = option_of(fields[i]);
          option && option->first != "dtype" && reason.find(option->first) != std::string::npos)
        place.fail(i, fields[i], reason);
    place.fail(1, fields[1], reason);
  }
}

std::string quoted_if_needed(const std::string& text) {
  if (!text.empty() && text.find_first_of(" \t\r#\"") == std::string::npos) return text;
  return fmt::format("\"{}\"", text);
}

std::string device_text(const ManifestDevice& d) {
  std::string line = "device " + d.profile;
  if (!d.name.empty()) line += " name=" + quoted_if_needed(d.name);
  if (d.num_sms != 0) line += fmt::format(" sms={}", d.num_sms);
  if (d.sm_clock_mhz != 0) line += fmt::format(" clock_mhz={}", d.sm_clock_mhz);
  return line;
}

}  // namespace

DeviceDesc ManifestDevice::desc() const {
  return device_variant(device_profile(profile), name, num_sms, sm_clock_mhz);
}

Manifest parse_manifest(std::string_view text, const std::string& source) {
  Manifest m;
  bool versioned = false;
  std::vector<std::string> fingerprints;
  Place place{source};
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++place.line;
    const std::vector<Field> fields = split_fields(text.substr(start, end - start), place);
    start = end + 1;
    if (fields.empty()) continue;
    const std::string& directive = fields[0].text;
    if (!versioned) {
      if (directive != kManifestMagic)
        place.fail(0, fields[0],
                   fmt::format("a manifest starts with the line `{} {}`", kManifestMagic,
                               kManifestVersion));
      if (fields.size() != 2)
        place.fail(fmt::format("the version line is `{} {}`", kManifestMagic, kManifestVersion));
      const int version = int_option(place, 1, fields[1], fields[1].text, 1, 1'000'000);
      if (version != kManifestVersion)
        place.fail(1, fields[1],
                   fmt::format("manifest version {} is not this kerntune's ({}): write it in "
                               "version {} or use the kerntune that reads it",
                               version, kManifestVersion, kManifestVersion));
      versioned = true;
      continue;
    }
    if (directive == kManifestMagic) place.fail(0, fields[0], "the version line is given twice");
    if (directive == "device") {
      ManifestDevice d = parse_device(fields, place);
      const std::string fingerprint = d.desc().fingerprint();
      if (std::find(fingerprints.begin(), fingerprints.end(), fingerprint) == fingerprints.end()) {
        fingerprints.push_back(fingerprint);
        m.devices.push_back(std::move(d));
      }
    } else if (directive == "tune") {
      m.tuning = parse_tuning(fields, place);
    } else if (directive == "key") {
      if (fields.size() != 2) place.fail("a key line is `key PROBLEM_KEY`");
      try {
        const std::string key = fields[1].text;
        op_spec_for_key(key).summarize(key);
        if (std::find(m.problem_keys.begin(), m.problem_keys.end(), key) == m.problem_keys.end())
          m.problem_keys.push_back(key);
      } catch (const Error& e) {
        place.fail(1, fields[1], e.what());
      }
    } else if (const OpEntry* op = OpRegistry::instance().find_by_name(directive)) {
      std::string key = parse_problem(*op->spec, fields, place);
      if (std::find(m.problem_keys.begin(), m.problem_keys.end(), key) == m.problem_keys.end())
        m.problem_keys.push_back(std::move(key));
    } else {
      place.fail(0, fields[0],
                 fmt::format("unknown directive: expected device, tune, key or an op ({})",
                             fmt::join(OpRegistry::instance().names(), ", ")));
    }
  }
  if (!versioned)
    throw_invalid(fmt::format("{}: empty manifest: it starts with the line `{} {}`", source,
                              kManifestMagic, kManifestVersion));
  if (m.devices.empty())
    throw_invalid(
        fmt::format("{}: no device line: name the GPUs to tune for, e.g. `device h200` "
                    "(profiles: {})",
                    source, fmt::join(device_profile_names(), ", ")));
  if (m.problem_keys.empty())
    throw_invalid(
        fmt::format("{}: no problem lines: add one per problem, e.g. `gemm "
                    "4096x4096x4096`",
                    source));
  return m;
}

Manifest read_manifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kNotFound, fmt::format("cannot read the manifest '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str(), path);
}

std::string to_text(const Manifest& m) {
  std::string out = fmt::format("{} {}\n", kManifestMagic, kManifestVersion);
  out += fmt::format("tune candidates={} finalists={}\n", m.tuning.candidates, m.tuning.finalists);
  for (const ManifestDevice& d : m.devices) out += device_text(d) + "\n";
  for (const std::string& key : m.problem_keys) out += problem_line(key) + "\n";
  return out;
}

std::string manifest_sha256(const Manifest& manifest) { return sha256_hex(to_text(manifest)); }

std::string problem_line(std::string_view problem_key) {
  const OpSpec& op = op_spec_for_key(problem_key);
  const std::optional<ProblemShape> shape = op.shape_of(problem_key);
  if (!shape) return fmt::format("key {}", problem_key);
  std::string line = fmt::format("{} {}", op.name(), shape->shape);
  for (const std::string& flag : shape->options.flags) line += " " + flag;
  if (shape->options.dtype != DType::kBF16)
    line += fmt::format(" dtype={}", to_string(shape->options.dtype));
  if (shape->options.out_dtype && *shape->options.out_dtype != shape->options.dtype)
    line += fmt::format(" out-dtype={}", to_string(*shape->options.out_dtype));
  if (!shape->options.layout.empty()) line += " layout=" + shape->options.layout;
  // NOTE: the op's inverse is checked, so a line always names the key it was written for.
  if (op.problem_key(shape->shape, shape->options) != problem_key)
    return fmt::format("key {}", problem_key);
  return line;
}

std::optional<std::string> device_line(const DeviceDesc& device) {
  const std::vector<std::string> names = device_profile_names();
  const std::string* base = nullptr;
  for (const std::string& name : names) {
    const DeviceDesc& p = device_profile(name);
    if (p.cc_major != device.cc_major || p.cc_minor != device.cc_minor) continue;
    if (p.name == device.name) {
      base = &name;
      break;
    }
    if (base == nullptr) base = &name;
  }
  if (base == nullptr) return std::nullopt;
  const DeviceDesc& p = device_profile(*base);
  ManifestDevice d;
  d.profile = *base;
  if (p.name != device.name) d.name = device.name;
  if (p.num_sms != device.num_sms) d.num_sms = device.num_sms;
  if (device.sm_clock_mhz != 0 && p.sm_clock_mhz != device.sm_clock_mhz)
    d.sm_clock_mhz = device.sm_clock_mhz;
  return device_text(d);
}

}  // namespace kt
