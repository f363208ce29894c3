// Merging shards into a bundle (bundle_merge.hpp).
#include "fleet/bundle_merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "cache/database.hpp"
#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "fleet/provenance.hpp"
#include "fleet/work_plan.hpp"

namespace kt::fleet {

namespace fs = std::filesystem;

namespace {

// Why `path` cannot be merged by this kerntune ("" when it can): its schema version, and the
// protocol and template versions of its winners (by op), each against this build's.
std::string version_problem(const std::string& path) {
  const int schema = cache::schema_version_of(path);
  if (schema != cache::kSchemaVersion)
    return fmt::format(
        "{}: schema version {}, this kerntune writes {} (migrate a copy with `kerntune cache "
        "migrate --db COPY` and merge that)",
        path, schema, cache::kSchemaVersion);
  const cache::Database db = cache::Database::open_readonly(path);
  std::map<std::string, std::set<int>> versions;  // "op template" / "protocol" -> versions
  std::set<std::string> unknown;
  for (const cache::Winner& w : db.all_winners()) {
    const OpEntry* op = OpRegistry::instance().find_by_key(w.key.problem_key);
    if (op == nullptr) {
      unknown.insert(cache::printable(w.key.problem_key));
      continue;
    }
    if (w.key.template_version != op->spec->template_version())
      versions[op->spec->name() + " template"].insert(w.key.template_version);
    if (w.key.protocol_version != kBenchmarkProtocolVersion)
      versions["benchmark protocol"].insert(w.key.protocol_version);
  }
  std::vector<std::string> problems;
  for (const auto& [what, found] : versions) {
    const int current = what == "benchmark protocol"
                            ? kBenchmarkProtocolVersion
                            : op_spec(what.substr(0, what.find(' '))).template_version();
    problems.push_back(
        fmt::format("{} version {} (this kerntune's: {})", what, fmt::join(found, ", "), current));
  }
  if (!unknown.empty())
    problems.push_back(fmt::format("winners of no op this kerntune has ({})", *unknown.begin()));
  if (problems.empty()) return "";
  return fmt::format("{}: winners of {}", path, fmt::join(problems, "; "));
}

}  // namespace

MergeReport merge_bundle(const MergeOptions& o) {
  if (o.out.empty()) throw_invalid("fleet merge: no bundle path (--out)");
  if (o.inputs.empty()) throw_invalid("fleet merge: no inputs to merge");
  std::error_code error;
  const bool out_exists = fs::exists(o.out, error);
  for (const std::string& input : o.inputs)
    if (out_exists && fs::equivalent(input, o.out, error))
      throw_invalid(fmt::format("fleet merge: '{}' is both an input and the bundle", input));

  // 1. Every file is checked before anything is written.
  std::vector<std::string> problems;
  for (const std::string& input : o.inputs)
    if (std::string p = version_problem(input); !p.empty()) problems.push_back(std::move(p));
  if (out_exists)
    if (std::string p = version_problem(o.out); !p.empty()) problems.push_back(std::move(p));
  if (!problems.empty())
    throw Error(ErrorKind::kDatabase,
                fmt::format("cannot merge: {}. Nothing was written; every file is as it was. "
                            "Tune the manifest again with this kerntune, or merge with the "
                            "kerntune that tuned these",
                            fmt::join(problems, "; ")));

  MergeReport report;
  report.out = o.out;
  std::vector<const Manifest*> manifests;
  for (const Manifest& m : o.manifests) manifests.push_back(&m);
  if (!manifests.empty()) {
    std::vector<cache::Database> sources;
    for (const std::string& input : o.inputs)
      sources.push_back(cache::Database::open_readonly(input));
    if (out_exists) sources.push_back(cache::Database::open_readonly(o.out));
    for (const Manifest* m : manifests)
      for (const WorkItem& item : plan(*m, 1)) {
        bool found = false;
        for (const cache::Database& db : sources) found = found || db.find_winner(item.key);
        if (!found)
          report.missing.push_back(
              fmt::format("{} on {}", item.problem_key, item.key.device_fingerprint));
      }
    if (!report.missing.empty() && !o.allow_incomplete)
      throw Error(ErrorKind::kNotFound,
                  fmt::format("cannot merge: {} of the manifest's items have no winner in the "
                              "inputs (first: {}); run their shards to the end (`kerntune fleet "
                              "status` shows which), or pass --allow-incomplete. Nothing was "
                              "written",
                              report.missing.size(), report.missing.front()));
  }

  // 2. The merge, into a temporary file beside the bundle.
  std::string before_hash;
  Provenance provenance = this_build("bundle");
  std::vector<std::string> sources = o.inputs;
  if (out_exists) {
    const cache::Database old = cache::Database::open_readonly(o.out);
    before_hash = old.content_sha256();
    sources.insert(sources.begin(), o.out);
  }
  for (const std::string& source : sources) {
    const Provenance p = read_provenance(cache::Database::open_readonly(source));
    provenance.devices = merged(provenance.devices, p.devices);
    provenance.driver_versions = merged(provenance.driver_versions, p.driver_versions);
    provenance.manifests = merged(provenance.manifests, p.manifests);
  }
  for (const Manifest* m : manifests)
    provenance.manifests = merged(provenance.manifests, {manifest_sha256(*m)});

  // A bundle in WAL mode (not one merge wrote) is first made self-contained, so that no -wal of
  // the old file is left beside the new one, which SQLite would replay into it.
  if (out_exists && fs::exists(o.out + "-wal", error))
    cache::Database::open(o.out).make_self_contained();

  const std::string temporary = fmt::format("{}.merging-{}", o.out, ::getpid());
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(temporary + suffix, error);
  try {
    {
      cache::Database bundle = cache::Database::open(temporary);
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const std::int64_t added = bundle.merge_from(sources[i], &report.skipped_rows);
        if (!(out_exists && i == 0)) report.rows_added += added;
      }
      count_content(bundle, provenance);
      write_provenance(bundle, provenance);
      bundle.make_self_contained();
    }
    fs::rename(temporary, o.out);
  } catch (...) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      fs::remove(temporary + suffix, error);
    throw;
  }
  report.num_measured = provenance.num_measured;
  report.num_predicted = provenance.num_predicted;
  report.num_winners = provenance.num_measured + provenance.num_predicted;
  report.content_sha256 = provenance.content_sha256;
  report.changed = before_hash != report.content_sha256;
  logger().info("fleet bundle written path={} inputs={} winners={} content_sha256={} changed={}",
                o.out, o.inputs.size(), report.num_winners, report.content_sha256.substr(0, 12),
                report.changed);
  return report;
}

}  // namespace kt::fleet
