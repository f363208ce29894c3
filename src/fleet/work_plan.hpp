// The work a manifest names and its split into shards: one item per (target device, problem),
// device by device in the manifest's order, and item i in shard (i mod N) + 1 of N. Pure
// arithmetic over the manifest, so every process that reads one manifest agrees on every shard.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/manifest.hpp"

namespace kt::fleet {

// Shard `index` of `count`, 1-based as the CLI writes it ("2/4").
struct Shard {
  int index = 1;
  int count = 1;
  std::string text() const;  // "2/4"
};
// Parses "I/N" with 1 <= I <= N <= 100000; throws kt::Error (invalid argument) naming the text.
Shard parse_shard(std::string_view text);

struct WorkItem {
  std::size_t index = 0;         // in the plan, from 0
  std::size_t device_index = 0;  // into Manifest::devices
  DeviceDesc device;  // the target, as tuned (predicted for, or measured on when it is this GPU)
  std::string problem_key;
  cache::TuningKey key;  // what a finished item's winner is stored under
  int shard = 1;         // 1-based
};

// Every item of `manifest`, in plan order, each with its shard of `shard_count`.
std::vector<WorkItem> plan(const Manifest& manifest, int shard_count);
// The items of one shard, in plan order.
std::vector<WorkItem> shard_items(const Manifest& manifest, const Shard& shard);

// The device a fingerprint names, as far as the built-in profiles know it: the profile of its
// compute capability (the one of its name, when there is one) as that device (device_variant: its
// name and SM count); nullopt for text that is not a fingerprint or a compute capability no
// profile has.
std::optional<DeviceDesc> device_of_fingerprint(std::string_view fingerprint);

// The file name a shard's database gets by default: "shard-2-of-4.db".
std::string shard_database_name(const Shard& shard);

}  // namespace kt::fleet
