// Progress over every shard of a manifest, read from the shards' databases (read-only, never
// created or migrated): per shard the items with a winner, those a run has started and not
// finished, and those not begun, and the manifest each database says it was tuned from.
#pragma once

#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "fleet/work_plan.hpp"

namespace kt::fleet {

struct ShardProgress {
  Shard shard;
  std::string db_path;
  bool exists = false;  // the database is there (a shard that has not started has none)
  std::string problem;  // why it was not read, or why its numbers may not be this manifest's
  int total = 0;
  int done = 0;      // items with a winner
  int running = 0;   // items with a run started and not finished (running, or killed)
  int measured = 0;  // of the done, measured on a GPU
  std::int64_t last_change_unix = 0;  // the newest run start or finish seen
};

struct FleetStatus {
  std::string manifest_sha256;
  std::vector<ShardProgress> shards;
  int total = 0;
  int done = 0;
  int running = 0;
  bool complete() const { return total > 0 && done == total; }
};

// The status of `shard_count` shards whose databases are `dir`/shard-I-of-N.db.
FleetStatus fleet_status(const Manifest& manifest, int shard_count, const std::string& dir);

}  // namespace kt::fleet
