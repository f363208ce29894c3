// `kerntune cache ls|show|export|import|merge|migrate|blocklist`: inspect and move tuning
// databases (a fleet precomputes one per GPU model and merges or ships them), upgrade an older
// one, and list or clear the kernels kept out of tuning because they crashed. ls, show, export
// and blocklist only read: the database is opened read-only, never created or migrated.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct CacheOptions {
  std::string db;
  ProblemOptions problem;
  std::string file;
  bool clear = false;
  bool force = false;
  bool json = false;
};

using cache::printable;

// Prints the rows an import or merge left out, one line each, on stderr.
void print_skipped(const std::vector<std::string>& skipped) {
  if (skipped.empty()) return;
  fmt::print(stderr, "skipped {} invalid rows (not stored):\n", skipped.size());
  for (const std::string& line : skipped) fmt::print(stderr, "  {}\n", printable(line));
}

// `cache ls --json`: {"database", "exists", "schema_version" (null without a file),
// "cubins", "cubin_bytes", "measurements", "winners": [{"device", "problem", "config",
// "median_us", "measured"}]}, winners in the order of the table.
void print_ls_json(const std::string& path, const std::optional<cache::Summary>& s,
                   const std::vector<cache::Winner>& winners) {
  fmt::print(
      "{{\"database\": {}, \"exists\": {}, \"schema_version\": {}, \"cubins\": {}, "
      "\"cubin_bytes\": {}, \"measurements\": {}, \"winners\": [",
      json_string(path), s ? "true" : "false",
      s ? std::to_string(s->schema_version) : std::string("null"), s ? s->num_cubins : 0,
      s ? s->cubin_bytes : 0, s ? s->num_measurements : 0);
  for (std::size_t i = 0; i < winners.size(); ++i) {
    const cache::Winner& w = winners[i];
    fmt::print(
        "{}{{\"device\": {}, \"problem\": {}, \"config\": {}, \"median_us\": {}, "
        "\"measured\": {}}}",
        i == 0 ? "" : ", ", json_string(w.key.device_fingerprint), json_string(w.key.problem_key),
        json_string(w.config_key), json_number(w.median_us), w.predicted ? "false" : "true");
  }
  fmt::print("]}}\n");
}

void ls(const CacheOptions& o) {
  const std::optional<cache::Database> db = open_existing_database(o.db);
  if (!db) {
    const std::string path = resolve_database_path(o.db);
    if (o.json)
      print_ls_json(path, std::nullopt, {});
    else
      fmt::print("{}\n", no_database_note(path));
    return;
  }
  const cache::Summary s = db->summary();
  auto winners = db->all_winners();
  std::sort(winners.begin(), winners.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key.device_fingerprint, a.key.problem_key) <
           std::tie(b.key.device_fingerprint, b.key.problem_key);
  });
  if (o.json) {
    print_ls_json(db->path(), s, winners);
    return;
  }
  fmt::print("{} (schema {}): {} cubins ({:.1f} MiB), {} measurements, {} winners\n", db->path(),
             s.schema_version, s.num_cubins, double(s.cubin_bytes) / (1 << 20), s.num_measurements,
             s.num_winners);
  if (winners.empty()) return;
  // Columns as wide as their longest entry (attention keys run longer than GEMM's).
  std::size_t device = 6, problem = 7, winner = 6;
  for (const auto& w : winners) {
    device = std::max(device, printable(w.key.device_fingerprint).size());
    problem = std::max(problem, printable(w.key.problem_key).size());
    winner = std::max(winner, printable(w.config_key).size());
  }
  fmt::print("{:<{}} {:<{}} {:<{}} {:>10}  {}\n", "device", device, "problem", problem, "winner",
             winner, "us", "source");
  for (const auto& w : winners)
    fmt::print("{:<{}} {:<{}} {:<{}} {:>10.1f}  {}\n", printable(w.key.device_fingerprint), device,
               printable(w.key.problem_key), problem, printable(w.config_key), winner, w.median_us,
               w.predicted ? "predicted" : "measured");
}

void blocklist(const CacheOptions& o) {
  if (o.clear) {
    cache::Database db = open_database(o.db);
    fmt::print("removed {} blocklist entries from {}\n", db.clear_blocklist(), db.path());
    return;
  }
  const std::optional<cache::Database> db = open_existing_database(o.db);
  if (!db) {
    fmt::print("0 blocklisted kernels: {}\n", no_database_note(resolve_database_path(o.db)));
    return;
  }
  const auto entries = db->blocklist();
  fmt::print(
      "{}: {} blocklisted kernels (kept out of `kerntune tune` unless "
      "--retry-blocklisted; `cache blocklist --clear` empties the list)\n",
      db->path(), entries.size());
  for (const cache::BlocklistEntry& e : entries)
    fmt::print("  {}  {} {}  {}  NVRTC {}  first on {}: {}\n", printable(e.device_fingerprint),
               printable(e.op), printable(e.config_key), cache::to_string(e.reason),
               printable(e.nvrtc_version), printable(e.problem_key),
               printable(e.detail.substr(0, e.detail.find('\n'))));
}

// The measurements of `problem_key` in `db`, by device, then fastest first.
std::vector<cache::Measurement> measurements_of(const cache::Database& db,
                                                const std::string& problem_key) {
  std::vector<cache::Measurement> rows;
  for (auto& m : db.all_measurements())
    if (m.key.problem_key == problem_key) rows.push_back(std::move(m));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key.device_fingerprint, a.median_us) <
           std::tie(b.key.device_fingerprint, b.median_us);
  });
  return rows;
}

// `cache show --json`: {"database", "exists", "problems": [{"problem", "measurements": [{"device",
// "protocol_version", "template_version", "config", "status", "median_us", "spread_pct",
// "num_reps", "tflops", "sm_clock_mhz", "predicted_us", "detail", "run_id", "created_unix"}]}]},
// problems in the order given, measurements as in the table (by device, fastest first); a time
// that is not a number is null; without a file, "exists" is false and every list empty.
void print_show_json(const std::string& path, const cache::Database* db,
                     const std::vector<std::string>& problems) {
  std::vector<std::string> items;
  for (const std::string& p : problems) {
    std::vector<std::string> rows;
    for (const cache::Measurement& m :
         db != nullptr ? measurements_of(*db, p) : std::vector<cache::Measurement>{})
      rows.push_back(fmt::format(
          "{{\"device\": {}, \"protocol_version\": {}, \"template_version\": {}, \"config\": {}, "
          "\"status\": {}, \"median_us\": {}, \"spread_pct\": {}, \"num_reps\": {}, "
          "\"tflops\": {}, \"sm_clock_mhz\": {}, \"predicted_us\": {}, \"detail\": {}, "
          "\"run_id\": {}, \"created_unix\": {}}}",
          json_string(m.key.device_fingerprint), m.key.protocol_version, m.key.template_version,
          json_string(m.config_key), json_string(cache::to_string(m.status)),
          json_number(m.median_us), json_number(m.spread_pct), m.num_reps, json_number(m.tflops),
          m.sm_clock_mhz, json_number(m.predicted_us), json_string(m.detail), json_string(m.run_id),
          m.created_unix));
    items.push_back(fmt::format("{{\"problem\": {}, \"measurements\": [{}]}}", json_string(p),
                                fmt::join(rows, ", ")));
  }
  fmt::print("{{\"database\": {}, \"exists\": {}, \"problems\": [{}]}}\n", json_string(path),
             db != nullptr ? "true" : "false", fmt::join(items, ", "));
}

void show(const CacheOptions& o) {
  const std::vector<std::string> problems = o.problem.problem_keys();
  const std::optional<cache::Database> db = open_existing_database(o.db);
  const std::string path = db ? db->path() : resolve_database_path(o.db);
  if (o.json) {
    print_show_json(path, db ? &*db : nullptr, problems);
    return;
  }
  if (!db) fmt::print("{}\n", no_database_note(path));
  for (const std::string& p : problems) {
    const std::vector<cache::Measurement> rows =
        db ? measurements_of(*db, p) : std::vector<cache::Measurement>{};
    fmt::print("{}: {} measurements\n", p, rows.size());
    for (const auto& m : rows)
      fmt::print("  {:<26} {:<44} {:<13} {:>10.1f} us {:>7.1f} TF/s  model {:>8.1f} us  {}\n",
                 printable(m.key.device_fingerprint), printable(m.config_key),
                 cache::to_string(m.status), m.median_us, m.tflops, m.predicted_us,
                 printable(m.detail.substr(0, m.detail.find('\n'))));
  }
}

// `cache migrate`: the one command that upgrades an existing database of an older schema in
// place (the commands that only read never do); a missing file is an error, not created.
void migrate(const CacheOptions& o) {
  const std::string path = resolve_database_path(o.db);
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw Error(ErrorKind::kNotFound,
                fmt::format("nothing to migrate: {}", no_database_note(path)));
  const int before = cache::schema_version_of(path);
  const int after = cache::Database::open(path).summary().schema_version;
  if (before == after)
    fmt::print("{}: schema version {}, this kerntune's: nothing to do\n", path, after);
  else if (before == 0)
    fmt::print("{}: an empty file, now a kerntune database of schema version {}\n", path, after);
  else
    fmt::print("{}: schema version {} -> {}\n", path, before, after);
}

}  // namespace

void register_cache(CLI::App& app) {
  auto o = std::make_shared<CacheOptions>();
  CLI::App* cmd = app.add_subcommand("cache", "Inspect, export, import and merge tuning databases");
  cmd->require_subcommand(1);
  add_database_option(*cmd, o->db);

  CLI::App* ls_cmd = cmd->add_subcommand("ls", "Summary and the winner of every tuned problem");
  add_database_option(*ls_cmd, o->db);
  ls_cmd->add_flag("--json", o->json,
                   "One JSON object: database, schema_version, cubins, cubin_bytes, "
                   "measurements, winners [{device, problem, config, median_us, measured}]");
  ls_cmd->callback([o] { ls(*o); });

  CLI::App* show_cmd = cmd->add_subcommand("show", "Every measurement of the given problem(s)");
  add_database_option(*show_cmd, o->db);
  add_problem_options(*show_cmd, o->problem);
  show_cmd->add_flag(
      "--json", o->json,
      "One JSON object: database, problems [{problem, measurements [{device, "
      "config, status, median_us, spread_pct, tflops, predicted_us, detail, ...}]}]");
  show_cmd->callback([o] { show(*o); });

  CLI::App* export_cmd = cmd->add_subcommand("export", "Write measurements and winners as CSV");
  add_database_option(*export_cmd, o->db);
  export_cmd->add_option("file", o->file, "CSV file to write (never the database itself)")
      ->required();
  export_cmd->add_flag("--force", o->force, "Replace the file if it exists");
  export_cmd->callback([o] {
    std::vector<std::string> skipped;
    required_existing_database(o->db, "cache export")
        .export_csv(o->file,
                    o->force ? cache::Database::ExistingFile::kReplace
                             : cache::Database::ExistingFile::kRefuse,
                    &skipped);
    fmt::print("exported to {}\n", o->file);
    print_skipped(skipped);
  });

  CLI::App* import_cmd = cmd->add_subcommand("import", "Read a CSV written by export (idempotent)");
  add_database_option(*import_cmd, o->db);
  import_cmd->add_option("file", o->file, "CSV file to read")->required()->check(CLI::ExistingFile);
  import_cmd->callback([o] {
    std::vector<std::string> skipped;
    const auto added = open_database(o->db).import_csv(o->file, &skipped);
    fmt::print("imported {} new rows from {}\n", added, o->file);
    print_skipped(skipped);
  });

  CLI::App* merge_cmd = cmd->add_subcommand(
      "merge", "Merge another database (cubins, measurements, winners) into this one (idempotent)");
  add_database_option(*merge_cmd, o->db);
  merge_cmd->add_option("other", o->file, "Database file to merge from")
      ->required()
      ->check(CLI::ExistingFile);
  merge_cmd->callback([o] {
    std::vector<std::string> skipped;
    const auto added = open_database(o->db).merge_from(o->file, &skipped);
    fmt::print("merged {} new rows from {}\n", added, o->file);
    print_skipped(skipped);
  });

  CLI::App* migrate_cmd = cmd->add_subcommand(
      "migrate",
      "Upgrade a database of an older schema in place (commands that only read never do)");
  add_database_option(*migrate_cmd, o->db);
  migrate_cmd->callback([o] { migrate(*o); });

  CLI::App* blocklist_cmd = cmd->add_subcommand(
      "blocklist", "Kernels that crashed, faulted or hung while tuning (skipped by later runs)");
  add_database_option(*blocklist_cmd, o->db);
  blocklist_cmd->add_flag("--clear", o->clear, "Remove every entry, so that they are tried again");
  blocklist_cmd->callback([o] { blocklist(*o); });
}

}  // namespace kt::cli
