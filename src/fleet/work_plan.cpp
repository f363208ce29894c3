// Plan and shards of a manifest (work_plan.hpp).
#include "fleet/work_plan.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/text.hpp"
#include "core/versions.hpp"

namespace kt::fleet {

namespace {
constexpr int kMaxShards = 100000;
}

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

Shard parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    throw_invalid(fmt::format("shard '{}' is not I/N (e.g. 2/4: the second of four)", text));
  Shard s;
  try {
    s.index = int(parse_int(text.substr(0, slash), "shard index"));
    s.count = int(parse_int(text.substr(slash + 1), "shard count"));
  } catch (const Error&) {
    throw_invalid(fmt::format("shard '{}' is not I/N with whole numbers (e.g. 2/4)", text));
  }
  if (s.count < 1 || s.count > kMaxShards || s.index < 1 || s.index > s.count)
    throw_invalid(fmt::format("shard '{}': I/N needs 1 <= I <= N <= {}", text, kMaxShards));
  return s;
}

std::vector<WorkItem> plan(const Manifest& manifest, int shard_count) {
  if (shard_count < 1 || shard_count > kMaxShards)
    throw_invalid(fmt::format("shard count {} is out of range (1-{})", shard_count, kMaxShards));
  std::vector<WorkItem> items;
  for (std::size_t d = 0; d < manifest.devices.size(); ++d) {
    const DeviceDesc device = manifest.devices[d].desc();
    for (const std::string& problem : manifest.problem_keys) {
      WorkItem item;
      item.index = items.size();
      item.device_index = d;
      item.device = device;
      item.problem_key = problem;
      item.key = cache::TuningKey{problem, device.fingerprint(), kBenchmarkProtocolVersion,
                                  op_spec_for_key(problem).template_version()};
      item.shard = int(item.index % std::size_t(shard_count)) + 1;
      items.push_back(std::move(item));
    }
  }
  return items;
}

std::vector<WorkItem> shard_items(const Manifest& manifest, const Shard& shard) {
  std::vector<WorkItem> out;
  for (WorkItem& item : plan(manifest, shard.count))
    if (item.shard == shard.index) out.push_back(std::move(item));
  return out;
}

std::optional<DeviceDesc> device_of_fingerprint(std::string_view fingerprint) {
  const std::optional<FingerprintParts> parts = parse_fingerprint(fingerprint);
  if (!parts) return std::nullopt;
  const DeviceDesc* base = nullptr;
  for (const std::string& name : device_profile_names()) {
    const DeviceDesc& p = device_profile(name);
    if (p.cc_major != parts->cc_major || p.cc_minor != parts->cc_minor) continue;
    if (base == nullptr || p.name == parts->name) base = &p;
  }
  if (base == nullptr) return std::nullopt;
  try {
    return device_variant(*base, parts->name, parts->num_sms, 0);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string shard_database_name(const Shard& shard) {
  return fmt::format("shard-{}-of-{}.db", shard.index, shard.count);
}

}  // namespace kt::fleet
