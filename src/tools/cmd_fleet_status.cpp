// `kerntune fleet status`: progress over every shard of a manifest, read from the shards'
// databases (read-only; a shard that has not started has none).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "cache/row_checks.hpp"
#include "core/manifest.hpp"
#include "fleet/fleet_status.hpp"
#include "tools/fleet_commands.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct StatusOptions {
  std::string manifest;
  int shards = 1;
  std::string dir = ".";
  bool require_complete = false;
  bool json = false;
};

// `fleet status --json`: {"manifest", "manifest_sha256", "items", "done", "running",
// "complete", "shards": [{"shard", "database", "exists", "items", "done", "running",
// "measured", "problem" (null when none)}]}.
void print_json(const StatusOptions& o, const fleet::FleetStatus& s) {
  std::vector<std::string> shards;
  for (const fleet::ShardProgress& p : s.shards)
    shards.push_back(fmt::format(
        "{{\"shard\": {}, \"database\": {}, \"exists\": {}, \"items\": {}, \"done\": {}, "
        "\"running\": {}, \"measured\": {}, \"problem\": {}}}",
        json_string(p.shard.text()), json_string(p.db_path), p.exists ? "true" : "false", p.total,
        p.done, p.running, p.measured, p.problem.empty() ? "null" : json_string(p.problem)));
  fmt::print(
      "{{\"manifest\": {}, \"manifest_sha256\": {}, \"items\": {}, \"done\": {}, \"running\": {}, "
      "\"complete\": {}, \"shards\": [{}]}}\n",
      json_string(o.manifest), json_string(s.manifest_sha256), s.total, s.done, s.running,
      s.complete() ? "true" : "false", fmt::join(shards, ", "));
}

void status(const StatusOptions& o) {
  const fleet::FleetStatus s = fleet::fleet_status(read_manifest(o.manifest), o.shards, o.dir);
  if (o.json) {
    print_json(o, s);
  } else {
    fmt::print(
        "manifest {}: {} items in {} shards: {} done, {} running or stopped, {} not begun "
        "({:.0f}%)\n",
        o.manifest, s.total, o.shards, s.done, s.running, s.total - s.done - s.running,
        s.total > 0 ? 100.0 * s.done / s.total : 0.0);
    for (const fleet::ShardProgress& p : s.shards) {
      std::string state;
      if (!p.exists)
        state = "not started (no database yet)";
      else
        state = fmt::format("{}/{} done ({} measured){}", p.done, p.total, p.measured,
                            p.running > 0 ? fmt::format(", {} running or stopped", p.running) : "");
      fmt::print("  shard {:<7} {:<44} {}\n", p.shard.text(), state, p.db_path);
      if (!p.problem.empty()) fmt::print("    note: {}\n", cache::printable(p.problem));
    }
  }
  if (o.require_complete && !s.complete()) {
    fmt::print(stderr, "kerntune: {} of {} items have no winner yet\n", s.total - s.done, s.total);
    throw CLI::RuntimeError(1);
  }
}

}  // namespace

void register_fleet_status(CLI::App& fleet) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = fleet.add_subcommand(
      "status", "Progress over every shard of a manifest, from the shards' databases");
  cmd->add_option("--manifest", o->manifest, "The fleet manifest")->required();
  cmd->add_option("--shards", o->shards, "How many shards it was split into")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--dir", o->dir, "Where the shards' databases are (shard-I-of-N.db)")
      ->capture_default_str();
  cmd->add_flag("--require-complete", o->require_complete, "Exit 1 unless every item has a winner");
  cmd->add_flag("--json", o->json,
                "One JSON object: manifest, manifest_sha256, items, done, running, complete, "
                "shards [{shard, database, exists, items, done, running, measured, problem}]");
  cmd->callback([o] { status(*o); });
}

}  // namespace kt::cli
