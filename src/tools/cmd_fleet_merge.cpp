// `kerntune fleet merge`: shards (or bundles) into one bundle with its provenance and content
// hash; refuses inputs of another schema or template version, naming them, and leaves every file
// as it was then; idempotent.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "fleet/bundle_merge.hpp"
#include "fleet/work_plan.hpp"
#include "tools/fleet_commands.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct MergeCliOptions {
  std::string out;
  std::vector<std::string> manifests;
  int shards = 0;
  std::string dir = ".";
  std::vector<std::string> inputs;
  bool allow_incomplete = false;
  bool json = false;
};

void merge(const MergeCliOptions& o) {
  fleet::MergeOptions options;
  options.out = o.out;
  options.allow_incomplete = o.allow_incomplete;
  for (const std::string& path : o.manifests) options.manifests.push_back(read_manifest(path));
  if (o.shards > 0) {
    if (o.manifests.empty())
      throw_invalid("--shards names the shards of a manifest: pass --manifest too");
    for (int i = 1; i <= o.shards; ++i) {
      const std::string path =
          (std::filesystem::path(o.dir) / fleet::shard_database_name({i, o.shards})).string();
      std::error_code error;
      if (!std::filesystem::exists(path, error))
        throw Error(ErrorKind::kNotFound,
                    fmt::format("cannot merge: shard {} has no database at '{}' (has it run? "
                                "`kerntune fleet status` shows every shard); nothing was written",
                                fleet::Shard{i, o.shards}.text(), path));
      options.inputs.push_back(path);
    }
  }
  options.inputs.insert(options.inputs.end(), o.inputs.begin(), o.inputs.end());
  const fleet::MergeReport r = fleet::merge_bundle(options);
  for (const std::string& line : r.skipped_rows)
    fmt::print(stderr, "  skipped invalid row: {}\n", cache::printable(line));
  if (o.json) {
    std::vector<std::string> missing;
    for (const std::string& m : r.missing) missing.push_back(json_string(m));
    fmt::print(
        "{{\"bundle\": {}, \"inputs\": {}, \"rows_added\": {}, \"winners\": {}, \"measured\": {}, "
        "\"predicted\": {}, \"content_sha256\": {}, \"changed\": {}, \"missing\": [{}], "
        "\"skipped_rows\": {}}}\n",
        json_string(r.out), options.inputs.size(), r.rows_added, r.num_winners, r.num_measured,
        r.num_predicted, json_string(r.content_sha256), r.changed ? "true" : "false",
        fmt::join(missing, ", "), r.skipped_rows.size());
    return;
  }
  fmt::print(
      "{}: {} winners ({} measured, {} predicted) from {} inputs; {} rows added; content "
      "sha256 {}{}\n",
      r.out, r.num_winners, r.num_measured, r.num_predicted, options.inputs.size(), r.rows_added,
      r.content_sha256, r.changed ? "" : " (unchanged)");
  if (!r.missing.empty())
    fmt::print("{} items of the manifest have no winner (--allow-incomplete), first: {}\n",
               r.missing.size(), r.missing.front());
}

}  // namespace

void register_fleet_merge(CLI::App& fleet) {
  auto o = std::make_shared<MergeCliOptions>();
  CLI::App* cmd = fleet.add_subcommand(
      "merge", "Merge shards (or bundles) into one bundle with provenance and a content hash");
  cmd->add_option("--out", o->out, "The bundle (created, or merged into when it exists)")
      ->required();
  cmd->add_option("--manifest", o->manifests,
                  "Manifest(s) the bundle answers (repeatable): every item must have a winner, "
                  "and their hashes go into the provenance");
  cmd->add_option("--shards", o->shards,
                  "Merge the N shards of --manifest from --dir (shard-I-of-N.db), all of them")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--dir", o->dir, "Where the shards' databases are")->capture_default_str();
  cmd->add_option("inputs", o->inputs, "More databases or bundles to merge");
  cmd->add_flag("--allow-incomplete", o->allow_incomplete,
                "Merge even when items of the manifest have no winner");
  cmd->add_flag("--json", o->json,
                "One JSON object: bundle, inputs, rows_added, winners, measured, predicted, "
                "content_sha256, changed, missing, skipped_rows");
  cmd->callback([o] { merge(*o); });
}

}  // namespace kt::cli
