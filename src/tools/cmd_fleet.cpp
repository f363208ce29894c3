// `kerntune fleet`: the group of the fleet commands (a manifest tuned in shards by a scheduler,
// merged into a bundle to ship), and `fleet plan`, which prints the work list and its shards.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "fleet/work_plan.hpp"
#include "tools/commands.hpp"
#include "tools/fleet_commands.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct PlanOptions {
  std::string manifest;
  int shards = 1;
  bool json = false;
};

// `fleet plan --json`: {"manifest", "manifest_sha256", "tuning": {"candidates", "finalists"},
// "devices": [fingerprint], "problems": [key], "shards": [{"shard", "items": [{"index",
// "problem", "device"}]}]}.
void print_json(const PlanOptions& o, const Manifest& m,
                const std::vector<fleet::WorkItem>& items) {
  std::vector<std::string> devices, problems, shards;
  for (const ManifestDevice& d : m.devices) devices.push_back(json_string(d.desc().fingerprint()));
  for (const std::string& p : m.problem_keys) problems.push_back(json_string(p));
  for (int s = 1; s <= o.shards; ++s) {
    std::vector<std::string> entries;
    for (const fleet::WorkItem& item : items)
      if (item.shard == s)
        entries.push_back(fmt::format("{{\"index\": {}, \"problem\": {}, \"device\": {}}}",
                                      item.index, json_string(item.problem_key),
                                      json_string(item.key.device_fingerprint)));
    shards.push_back(fmt::format("{{\"shard\": {}, \"items\": [{}]}}",
                                 json_string(fleet::Shard{s, o.shards}.text()),
                                 fmt::join(entries, ", ")));
  }
  fmt::print(
      "{{\"manifest\": {}, \"manifest_sha256\": {}, \"tuning\": {{\"candidates\": {}, "
      "\"finalists\": {}}}, \"devices\": [{}], \"problems\": [{}], \"shards\": [{}]}}\n",
      json_string(o.manifest), json_string(manifest_sha256(m)), m.tuning.candidates,
      m.tuning.finalists, fmt::join(devices, ", "), fmt::join(problems, ", "),
      fmt::join(shards, ", "));
}

void plan(const PlanOptions& o) {
  const Manifest m = read_manifest(o.manifest);
  const std::vector<fleet::WorkItem> items = fleet::plan(m, o.shards);
  if (o.json) {
    print_json(o, m, items);
    return;
  }
  fmt::print(
      "manifest {} (sha256 {}): {} devices x {} problems = {} items; tune candidates={} "
      "finalists={}\n",
      o.manifest, manifest_sha256(m).substr(0, 16), m.devices.size(), m.problem_keys.size(),
      items.size(),
      m.tuning.candidates == 0 ? std::string("all") : std::to_string(m.tuning.candidates),
      m.tuning.finalists);
  for (const ManifestDevice& d : m.devices)
    fmt::print("  device {} (profile {})\n", d.desc().fingerprint(), d.profile);
  for (int s = 1; s <= o.shards; ++s) {
    int count = 0;
    for (const fleet::WorkItem& item : items) count += item.shard == s;
    fmt::print("shard {} ({} items, database {}):\n", fleet::Shard{s, o.shards}.text(), count,
               fleet::shard_database_name({s, o.shards}));
    for (const fleet::WorkItem& item : items)
      if (item.shard == s)
        fmt::print("  {:>4}  {}  on {}\n", item.index, item.problem_key,
                   item.key.device_fingerprint);
  }
}

}  // namespace

void register_fleet(CLI::App& app) {
  CLI::App* fleet = app.add_subcommand(
      "fleet",
      "Tune a manifest of problems for a fleet in shards (one per scheduler task), merge them "
      "into a bundle, verify and compare bundles");
  fleet->require_subcommand(1);
  fleet->footer(R"(Workflow (docs/FLEET.md; deploy/slurm and deploy/k8s run it on a scheduler):
  kerntune fleet plan   --manifest m.txt --shards 4             the work list and its shards
  kerntune fleet run    --manifest m.txt --shard 2/4 --out out/  one shard (resumable)
  kerntune fleet status --manifest m.txt --shards 4 --dir out/   progress over every shard
  kerntune fleet merge  --manifest m.txt --shards 4 --dir out/ --out bundle.db
  kerntune fleet verify bundle.db                                 before shipping it
  kerntune fleet diff   old.db bundle.db                          what changed)");
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = fleet->add_subcommand(
      "plan", "Print a manifest's work list (device x problem) and which shard runs each item");
  cmd->add_option("--manifest", o->manifest, "The fleet manifest (docs/FLEET.md)")->required();
  cmd->add_option("--shards", o->shards, "How many shards to split it into")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--json", o->json,
                "One JSON object: manifest, manifest_sha256, tuning, devices, problems, shards "
                "[{shard, items [{index, problem, device}]}]");
  cmd->callback([o] { plan(*o); });
  register_fleet_run(*fleet);
  register_fleet_status(*fleet);
  register_fleet_merge(*fleet);
  register_fleet_verify(*fleet);
  register_fleet_diff(*fleet);
}

}  // namespace kt::cli
