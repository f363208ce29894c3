// The database's crash-isolation and resume state (schema version 2): the blocklist of kernels
// that crashed, faulted or hung on a device, and the tuning_runs table that lets a killed run
// be found and continued. Members of kt::cache::Database; one transaction per call.
#include <fmt/format.h>

#include <ctime>

#include "cache/database.hpp"
#include "cache/database_impl.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"

namespace kt::cache {

namespace {

constexpr const char* kBlocklistColumns =
    "device_fingerprint, compile_key, nvrtc_version, template_version, op, config_key, kernel, "
    "problem_key, reason, detail, run_id, created_unix";

constexpr const char* kRunColumns =
    "run_id, problem_key, device_fingerprint, protocol_version, template_version, "
    "options_sha256, state, pid, host, started_unix, finished_unix";

BlocklistEntry read_entry(const sql::Statement& row, const std::string& path) {
  BlocklistEntry e;
  row.read_columns(0, e.device_fingerprint, e.compile_key, e.nvrtc_version, e.template_version,
                   e.op, e.config_key, e.kernel, e.problem_key);
  try {
    e.reason = parse_status(row.column_text(8));
  } catch (const Error& error) {
    throw Error(ErrorKind::kDatabase,
                fmt::format("database '{}': blocklist entry of {}: {}; clear it with `kerntune "
                            "cache blocklist --clear`",
                            path, e.config_key, error.what()));
  }
  row.read_columns(9, e.detail, e.run_id, e.created_unix);
  return e;
}

TuningRun read_run(const sql::Statement& row) {
  TuningRun r;
  r.run_id = row.column_text(0);
  r.key = read_tuning_key(row, 1);
  r.options_sha256 = row.column_text(5);
  r.done = row.column_text(6) == "done";
  row.read_columns(7, r.pid, r.host, r.started_unix, r.finished_unix);
  return r;
}

std::int64_t now_unix() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

bool is_crash(Status status) {
  return status == Status::kCompileCrash || status == Status::kTimeout ||
         status == Status::kIllegalAddress || status == Status::kLaunchFailure;
}

bool is_device_fault(const BlocklistEntry& entry) {
  switch (entry.reason) {
    case Status::kIllegalAddress:
    case Status::kLaunchFailure:
      return true;
    case Status::kTimeout:
      // NOTE: the compile worker's time-out detail has always begun so (candidate_compiler.cpp,
      // tuner/lost_worker.hpp); the benchmark worker's begins "benchmark worker".
      return entry.detail.rfind("compile worker", 0) != 0;
    default:
      return false;
  }
}

void Database::add_to_blocklist(const BlocklistEntry& entry) {
  const Locked impl(impl_);
  sql::Statement insert(impl->db, fmt::format("INSERT OR REPLACE INTO blocklist ({}) VALUES (?, ?, "
                                              "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                              kBlocklistColumns));
  insert
      .bind_all(entry.device_fingerprint, entry.compile_key, entry.nvrtc_version,
                entry.template_version, entry.op, entry.config_key, entry.kernel, entry.problem_key,
                std::string_view(to_string(entry.reason)), entry.detail, entry.run_id,
                entry.created_unix == 0 ? now_unix() : entry.created_unix)
      .run();
}

std::optional<BlocklistEntry> Database::find_blocklisted(const std::string& device_fingerprint,
                                                         const std::string& compile_key) const {
  const Locked impl(impl_);
  sql::Statement query(impl->db, fmt::format("SELECT {} FROM blocklist WHERE device_fingerprint = "
                                             "? AND compile_key = ?",
                                             kBlocklistColumns));
  query.bind_all(device_fingerprint, compile_key);
  if (!query.step()) return std::nullopt;
  return read_entry(query, impl->path);
}

std::vector<BlocklistEntry> Database::blocklist() const {
  const Locked impl(impl_);
  sql::Statement query(impl->db,
                       fmt::format("SELECT {} FROM blocklist ORDER BY device_fingerprint, "
                                   "created_unix, config_key",
                                   kBlocklistColumns));
  std::vector<BlocklistEntry> rows;
  while (query.step()) rows.push_back(read_entry(query, impl->path));
  return rows;
}

std::int64_t Database::clear_blocklist() {
  const Locked impl(impl_);
  sql::Statement erase(impl->db, "DELETE FROM blocklist");
  erase.run();
  return impl->db.changes();
}

void Database::begin_run(const TuningRun& run) {
  const Locked impl(impl_);
  sql::Statement exists(impl->db, "SELECT 1 FROM tuning_runs WHERE run_id = ?");
  exists.bind(1, run.run_id);
  if (exists.step()) {
    throw Error(ErrorKind::kDatabase,
                fmt::format("database '{}' already holds tuning run '{}'; pick another run id",
                            impl->path, run.run_id));
  }
  sql::Statement insert(
      impl->db, fmt::format("INSERT INTO tuning_runs ({}) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, "
                            "?, ?, 0)",
                            kRunColumns));
  insert
      .bind_all(run.run_id, run.key.problem_key, run.key.device_fingerprint,
                run.key.protocol_version, run.key.template_version, run.options_sha256, run.pid,
                run.host, run.started_unix == 0 ? now_unix() : run.started_unix)
      .run();
}

std::optional<TuningRun> Database::find_run(const std::string& run_id) const {
  const Locked impl(impl_);
  sql::Statement query(impl->db,
                       fmt::format("SELECT {} FROM tuning_runs WHERE run_id = ?", kRunColumns));
  query.bind(1, run_id);
  if (!query.step()) return std::nullopt;
  return read_run(query);
}

std::vector<TuningRun> Database::unfinished_runs(const TuningKey& key,
                                                 const std::string& options_sha256) const {
  const Locked impl(impl_);
  sql::Statement query(impl->db,
                       fmt::format("SELECT {} FROM tuning_runs WHERE {} AND state = 'running' AND "
                                   "options_sha256 = ? ORDER BY started_unix, run_id",
                                   kRunColumns, kTuningKeyMatch));
  bind_tuning_key(query, key).bind(5, options_sha256);
  std::vector<TuningRun> rows;
  while (query.step()) rows.push_back(read_run(query));
  return rows;
}

std::optional<TuningRun> Database::last_finished_run(const TuningKey& key,
                                                     const std::string& options_sha256) const {
  const Locked impl(impl_);
  sql::Statement query(
      impl->db, fmt::format("SELECT {} FROM tuning_runs WHERE {} AND state = 'done' AND "
                            "options_sha256 = ? ORDER BY finished_unix DESC, run_id DESC LIMIT 1",
                            kRunColumns, kTuningKeyMatch));
  bind_tuning_key(query, key).bind(5, options_sha256);
  if (!query.step()) return std::nullopt;
  return read_run(query);
}

std::vector<TuningRun> Database::all_runs() const {
  const Locked impl(impl_);
  sql::Statement query(impl->db, fmt::format("SELECT {} FROM tuning_runs ORDER BY started_unix, "
                                             "run_id",
                                             kRunColumns));
  std::vector<TuningRun> rows;
  while (query.step()) rows.push_back(read_run(query));
  return rows;
}

bool Database::claim_run(const std::string& run_id, std::int64_t old_pid,
                         const std::string& old_host, std::int64_t pid, const std::string& host) {
  const Locked impl(impl_);
  sql::Statement update(impl->db,
                        "UPDATE tuning_runs SET pid = ?, host = ? WHERE run_id = ? AND pid = ? "
                        "AND host = ? AND state = 'running'");
  update.bind_all(pid, host, run_id, old_pid, old_host).run();
  return impl->db.changes() == 1;
}

}  // namespace kt::cache
