// Provenance rows <-> Provenance (provenance.hpp). Lists are stored one item a line.
#include "fleet/provenance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/text.hpp"
#include "core/versions.hpp"
#include "kerntune/kerntune.h"

namespace kt::fleet {

namespace {

std::string join_lines(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : "\n") + item;
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view line : split(text, '\n'))
    if (!line.empty()) out.emplace_back(line);
  return out;
}

std::int64_t number(const std::map<std::string, std::string>& rows, const std::string& name,
                    const std::string& path) {
  const auto it = rows.find(name);
  if (it == rows.end() || it->second.empty()) return 0;
  try {
    return parse_int(it->second, name);
  } catch (const Error&) {
    throw Error(
        ErrorKind::kDatabase,
        fmt::format("'{}': provenance row {} holds '{}', not a number", path, name, it->second));
  }
}

std::string text(const std::map<std::string, std::string>& rows, const std::string& name) {
  const auto it = rows.find(name);
  return it == rows.end() ? std::string() : it->second;
}

}  // namespace

Provenance this_build(const std::string& role) {
  Provenance p;
  p.role = role;
  p.kerntune_version = kt_version();
  p.protocol_version = kBenchmarkProtocolVersion;
  for (const OpEntry& op : OpRegistry::instance().all())
    p.template_versions[op.spec->name()] = op.spec->template_version();
  p.created_unix = std::int64_t(std::time(nullptr));
  return p;
}

std::string device_record(const DeviceDesc& device, bool measured) {
  std::string line = fmt::format("{} clock_mhz={}", device.fingerprint(), device.sm_clock_mhz);
  if (device.driver_version != 0) line += fmt::format(" driver={}", device.driver_version);
  return line + (measured ? " measured" : " predicted");
}

std::string template_versions_text(const std::map<std::string, int>& versions) {
  std::string out;
  for (const auto& [op, version] : versions)
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", op, version);
  return out;
}

Provenance read_provenance(const cache::Database& db) {
  const std::map<std::string, std::string> rows = db.provenance();
  Provenance p;
  p.role = text(rows, "role");
  p.shard = text(rows, "shard");
  p.kerntune_version = text(rows, "kerntune_version");
  p.protocol_version = int(number(rows, "protocol_version", db.path()));
  const std::string versions = text(rows, "template_versions");
  for (std::string_view entry : split(versions, ' ')) {
    const std::size_t eq = entry.find('=');
    if (entry.empty() || eq == std::string_view::npos) continue;
    try {
      p.template_versions[std::string(entry.substr(0, eq))] =
          int(parse_int(entry.substr(eq + 1), "template version"));
    } catch (const Error&) {
      throw Error(ErrorKind::kDatabase, fmt::format("'{}': provenance row template_versions "
                                                    "holds '{}', not op=version",
                                                    db.path(), entry));
    }
  }
  p.nvrtc_versions = split_lines(text(rows, "nvrtc_versions"));
  p.driver_versions = split_lines(text(rows, "driver_versions"));
  p.devices = split_lines(text(rows, "devices"));
  p.manifests = split_lines(text(rows, "manifest_sha256"));
  p.num_measured = number(rows, "num_measured", db.path());
  p.num_predicted = number(rows, "num_predicted", db.path());
  p.created_unix = number(rows, "created_unix", db.path());
  p.content_sha256 = text(rows, "content_sha256");
  return p;
}

void write_provenance(cache::Database& db, const Provenance& p) {
  std::map<std::string, std::string> rows = {
      {"role", p.role},
      {"kerntune_version", p.kerntune_version},
      {"protocol_version", std::to_string(p.protocol_version)},
      {"template_versions", template_versions_text(p.template_versions)},
      {"nvrtc_versions", join_lines(p.nvrtc_versions)},
      {"driver_versions", join_lines(p.driver_versions)},
      {"devices", join_lines(p.devices)},
      {"manifest_sha256", join_lines(p.manifests)},
      {"num_measured", std::to_string(p.num_measured)},
      {"num_predicted", std::to_string(p.num_predicted)},
      {"created_unix", std::to_string(p.created_unix)},
      {"content_sha256", p.content_sha256},
  };
  if (!p.shard.empty()) rows["shard"] = p.shard;
  db.set_provenance(rows);
}

void count_content(const cache::Database& db, Provenance& p) {
  p.num_measured = p.num_predicted = 0;
  for (const cache::Winner& w : db.all_winners())
    ++(w.predicted ? p.num_predicted : p.num_measured);
  p.nvrtc_versions = db.cubin_nvrtc_versions();
  p.content_sha256 = db.content_sha256();
}

std::vector<std::string> merged(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

}  // namespace kt::fleet
