// Fleet progress from the shards' databases (fleet_status.hpp).
#include "fleet/fleet_status.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "cache/database.hpp"
#include "core/error.hpp"
#include "fleet/provenance.hpp"

namespace kt::fleet {

FleetStatus fleet_status(const Manifest& manifest, int shard_count, const std::string& dir) {
  FleetStatus status;
  status.manifest_sha256 = manifest_sha256(manifest);
  const std::vector<WorkItem> items = plan(manifest, shard_count);
  status.total = int(items.size());
  for (int i = 1; i <= shard_count; ++i) {
    ShardProgress s;
    s.shard = Shard{i, shard_count};
    s.db_path = (std::filesystem::path(dir) / shard_database_name(s.shard)).string();
    for (const WorkItem& item : items) s.total += item.shard == i;
    std::error_code error;
    s.exists = std::filesystem::exists(s.db_path, error);
    if (!s.exists) {
      status.shards.push_back(std::move(s));
      continue;
    }
    try {
      const cache::Database db = cache::Database::open_readonly(s.db_path);
      const Provenance p = read_provenance(db);
      if (p.role == "shard" && p.shard != s.shard.text())
        s.problem = fmt::format("its provenance says shard {}", p.shard);
      else if (!p.manifests.empty() && std::find(p.manifests.begin(), p.manifests.end(),
                                                 status.manifest_sha256) == p.manifests.end())
        s.problem = fmt::format("it was tuned from another manifest (sha256 {})",
                                p.manifests.front().substr(0, 12));
      std::set<std::string> running;
      for (const cache::TuningRun& run : db.all_runs()) {
        s.last_change_unix = std::max({s.last_change_unix, run.started_unix, run.finished_unix});
        if (!run.done) running.insert(run.key.problem_key + '\n' + run.key.device_fingerprint);
      }
      for (const WorkItem& item : items) {
        if (item.shard != i) continue;
        if (auto winner = db.find_winner(item.key)) {
          ++s.done;
          s.measured += !winner->predicted;
        } else if (running.count(item.problem_key + '\n' + item.key.device_fingerprint) != 0) {
          ++s.running;
        }
      }
    } catch (const Error& e) {
      s.problem = e.what();
    }
    status.done += s.done;
    status.running += s.running;
    status.shards.push_back(std::move(s));
  }
  return status;
}

}  // namespace kt::fleet
