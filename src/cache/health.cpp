// The database report of `kerntune doctor`: a read-only connection, PRAGMA integrity_check, the
// checks of schema::inspect, then row counts and stale rows by plain SQL.
#include "cache/health.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cache/schema.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"

namespace kt::cache {

namespace {

constexpr int kBusyTimeoutMs = 10000;

std::vector<std::string> integrity_problems(sql::Connection& db) {
  sql::Statement query(db, "PRAGMA integrity_check(10)");
  std::vector<std::string> problems;
  while (query.step()) {
    std::string row = query.column_text(0);
    if (row != "ok") problems.push_back(std::move(row));
  }
  return problems;
}

std::int64_t count(sql::Connection& db, const std::string& sql) {
  sql::Statement query(db, sql);
  return query.step() ? query.column_int64(0) : 0;
}

// Rows of `table` whose versions are below the expected ones.
std::int64_t old_version_rows(sql::Connection& db, const char* table, const HealthExpectations& e) {
  std::string older = "protocol_version < ?";
  for (std::size_t i = 0; i < e.template_versions.size(); ++i)
    older += " OR (substr(problem_key, 1, length(?)) = ? AND template_version < ?)";
  sql::Statement query(db, fmt::format("SELECT count(*) FROM {} WHERE {}", table, older));
  int index = 0;
  query.bind(++index, e.protocol_version);
  for (const auto& [prefix, version] : e.template_versions) {
    query.bind(++index, std::string_view(prefix));
    query.bind(++index, std::string_view(prefix));
    query.bind(++index, version);
  }
  return query.step() ? query.column_int64(0) : 0;
}

// Rows of `table` whose device is none of `fingerprints`; their devices go to `devices`.
std::int64_t other_device_rows(sql::Connection& db, const char* table,
                               const std::vector<std::string>& fingerprints,
                               std::vector<std::string>& devices) {
  sql::Statement query(
      db, fmt::format("SELECT device_fingerprint, count(*) FROM {} GROUP BY device_fingerprint",
                      table));
  std::int64_t rows = 0;
  while (query.step()) {
    const std::string device = query.column_text(0);
    if (std::find(fingerprints.begin(), fingerprints.end(), device) != fingerprints.end()) continue;
    rows += query.column_int64(1);
    if (std::find(devices.begin(), devices.end(), device) == devices.end())
      devices.push_back(device);
  }
  return rows;
}

StaleRows stale_rows(sql::Connection& db, const HealthExpectations& e, int schema_version) {
  StaleRows stale;
  stale.old_version_winners = old_version_rows(db, "winners", e);
  stale.old_version_measurements = old_version_rows(db, "measurements", e);
  if (!e.device_fingerprints.empty()) {
    stale.other_device_winners =
        other_device_rows(db, "winners", e.device_fingerprints, stale.other_devices);
    stale.other_device_measurements =
        other_device_rows(db, "measurements", e.device_fingerprints, stale.other_devices);
  }
  if (!e.nvrtc_version.empty()) {
    // A cubin with a source key (schema version 4) serves whatever NVRTC is loaded: the runtime
    // finds it by that.
    sql::Statement query(db, schema_version >= 4 ? "SELECT nvrtc_version, count(*) FROM cubins "
                                                   "WHERE source_key = '' GROUP BY nvrtc_version"
                                                 : "SELECT nvrtc_version, count(*) FROM cubins "
                                                   "GROUP BY nvrtc_version");
    while (query.step()) {
      const std::string version = query.column_text(0);
      if (version == e.nvrtc_version) continue;
      stale.other_nvrtc_cubins += query.column_int64(1);
      stale.other_nvrtc_versions.push_back(version.empty() ? "(unknown)" : version);
    }
  }
  return stale;
}

Summary summarize(sql::Connection& db, int schema_version) {
  Summary s;
  s.num_cubins = count(db, "SELECT count(*) FROM cubins");
  s.cubin_bytes = count(db, "SELECT coalesce(sum(length(cubin)), 0) FROM cubins");
  s.num_measurements = count(db, "SELECT count(*) FROM measurements");
  s.num_winners = count(db, "SELECT count(*) FROM winners");
  s.schema_version = schema_version;
  return s;
}

}  // namespace

DatabaseHealth check_database_health(const std::string& path, const HealthExpectations& expected) {
  DatabaseHealth health;
  std::error_code error;
  health.exists = std::filesystem::exists(path, error);
  if (!health.exists) return health;
  if (std::filesystem::is_directory(path, error)) {
    health.problem = schema::unusable_file_message(path, "it is a directory, not a file");
    return health;
  }
  try {
    sql::Connection db = sql::Connection::open(path, sql::OpenMode::kReadOnly);
    db.exec(fmt::format("PRAGMA busy_timeout = {}", kBusyTimeoutMs));
    try {
      health.integrity_problems = integrity_problems(db);
      sql::Statement id(db, "PRAGMA application_id");
      if (id.step()) health.application_id = id.column_int64(0);
    } catch (const sql::SqliteError& failure) {
      if (!failure.is_not_a_database()) throw;
      health.problem = schema::unusable_file_message(
          path, "it is not a SQLite database, or it is truncated or corrupt");
      return health;
    }
    if (!health.integrity_problems.empty()) {
      health.problem =
          schema::unusable_file_message(path, "it is corrupt (PRAGMA integrity_check)");
      return health;
    }
    const schema::FileState state = schema::inspect(db, path);
    if (state.empty) {
      health.problem =
          schema::unusable_file_message(path, "it is empty (it holds no kerntune schema)");
      return health;
    }
    health.schema_version = state.schema_version;
    sql::Transaction snapshot(db, sql::Transaction::Kind::kRead);
    health.summary = summarize(db, state.schema_version);
    health.stale = stale_rows(db, expected, state.schema_version);
    snapshot.commit();
    if (state.schema_version == kSchemaVersion)
      health.invalid = Database::open_readonly(path).invalid_rows();
  } catch (const Error& failure) {
    health.problem = failure.what();
  }
  return health;
}

}  // namespace kt::cache
