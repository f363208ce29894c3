// The tuning database: opening (creating, migrating), cubins, measurements and winners one
// record at a time, the summary, the invalid rows and the default path. One connection per
// Database, guarded by a mutex; every write is one transaction. Whole-file members (merge, CSV,
// content hash) are in database_files.cpp, records to rows and back in database_rows.cpp.
#include "cache/database.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>
#include <ctime>
#include <filesystem>
#include <utility>

#include "cache/database_impl.hpp"
#include "cache/database_rows.hpp"
#include "cache/row_checks.hpp"
#include "cache/schema.hpp"
#include "cache/sql.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/text.hpp"

namespace kt::cache {

namespace fs = std::filesystem;

namespace {

constexpr int kBusyTimeoutMs = 10000;

struct StatusName {
  Status status;
  const char* name;
};

constexpr StatusName kStatusNames[] = {
    {Status::kOk, "ok"},
    {Status::kPredicted, "predicted"},
    {Status::kRejected, "rejected"},
    {Status::kCompileError, "compile_error"},
    {Status::kLaunchError, "launch_error"},
    {Status::kWrongResult, "wrong_result"},
    {Status::kCompileCrash, "compile_crash"},
    {Status::kTimeout, "timeout"},
    {Status::kIllegalAddress, "illegal_address"},
    {Status::kLaunchFailure, "launch_failure"},
};

std::int64_t now_unix() { return static_cast<std::int64_t>(std::time(nullptr)); }

void check_names(const std::vector<std::string>& names, const char* field,
                 const std::string& compile_key) {
  for (const std::string& name : names) {
    if (name.empty() || name.find('\n') != std::string::npos) {
      throw_invalid(fmt::format("cubin {}: {} holds '{}'; names must be non-empty single lines",
                                compile_key, field, name));
    }
  }
}

// The smallest string greater than every string starting with `prefix`, or nothing when there
// is none (an empty prefix or only 0xff bytes). SQLite compares TEXT bytewise (BINARY).
std::optional<std::string> prefix_upper_bound(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last != 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return std::nullopt;
}

// ---- opening -----------------------------------------------------------------------------------

void create_parent_directories(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code error;
  fs::create_directories(parent, error);
  if (error) {
    throw Error(ErrorKind::kDatabase,
                fmt::format("cannot create directory '{}' for the database '{}': {}; pass --db "
                            "PATH to use another file",
                            parent.string(), path, error.message()));
  }
}

sql::Connection open_connection(const std::string& path, sql::OpenMode mode) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    throw Error(ErrorKind::kDatabase,
                fmt::format("'{}' is a directory, not a database file; pass --db PATH naming a "
                            "file",
                            path));
  }
  try {
    return sql::Connection::open(path, mode);
  } catch (const sql::SqliteError& failure) {
    if (!failure.is_cant_open()) throw;
    throw Error(
        ErrorKind::kDatabase,
        fmt::format("{} (check that it is a file you may {}, in a directory that exists); "
                    "pass --db PATH to use another file",
                    failure.what(), mode == sql::OpenMode::kReadOnly ? "read" : "read and write"));
  }
}

// A read-only connection to the existing file at `path` and what inspect() found in it.
std::pair<sql::Connection, schema::FileState> open_existing(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) {
    throw Error(
        ErrorKind::kNotFound,
        fmt::format("no kerntune database at '{}': check the path, or pass --db PATH", path));
  }
  sql::Connection db = open_connection(path, sql::OpenMode::kReadOnly);
  db.exec(fmt::format("PRAGMA busy_timeout = {}", kBusyTimeoutMs));
  const schema::FileState state = schema::inspect(db, path);
  return {std::move(db), state};
}

}  // namespace

sql::Connection open_existing_readonly(const std::string& path) {
  auto [db, state] = open_existing(path);
  if (state.empty) {
    throw Error(ErrorKind::kDatabase,
                schema::unusable_file_message(path, "it is empty (it holds no kerntune schema)"));
  }
  if (state.schema_version < kSchemaVersion) {
    throw Error(ErrorKind::kDatabase,
                fmt::format("'{}' has schema version {}, older than this kerntune's {}, and was "
                            "not changed (a read-only open never migrates); upgrade it with "
                            "`kerntune cache migrate --db '{}'`",
                            path, state.schema_version, kSchemaVersion, path));
  }
  return std::move(db);
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == ":memory:" || b == ":memory:") return false;
  std::error_code error;
  return fs::equivalent(a, b, error) && !error;
}

// ---- Status ------------------------------------------------------------------------------------

const char* to_string(Status status) {
  for (const StatusName& entry : kStatusNames)
    if (entry.status == status) return entry.name;
  return "unknown";
}

Status parse_status(const std::string& text) {
  for (const StatusName& entry : kStatusNames)
    if (text == entry.name) return entry.status;
  std::vector<std::string> names;
  for (const StatusName& entry : kStatusNames) names.emplace_back(entry.name);
  throw_invalid(
      fmt::format("unknown status '{}': expected one of {}", text, fmt::join(names, ", ")));
}

// ---- Database ----------------------------------------------------------------------------------

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Database Database::open(const std::string& path) {
  if (path.empty()) throw_invalid("empty database path: pass --db PATH or set KERNTUNE_DB");
  const bool in_memory = path == ":memory:";
  if (!in_memory) create_parent_directories(path);
  sql::Connection db = open_connection(path, sql::OpenMode::kReadWriteCreate);
  db.exec(fmt::format("PRAGMA busy_timeout = {}", kBusyTimeoutMs));
  db.exec("PRAGMA foreign_keys = ON");
  const schema::FileState state = schema::inspect(db, path);
  if (!in_memory) {
    // NOTE: WAL lets readers (the runtime) proceed while a tuner writes, and several processes
    // share the file; it needs shared memory, which some network filesystems lack.
    sql::Statement wal(db, "PRAGMA journal_mode = WAL");
    const std::string mode = wal.step() ? wal.column_text(0) : "";
    if (mode != "wal") {
      logger().warn("database journal mode is not WAL path={} journal_mode={}", path, mode);
    }
    // NOTE: with WAL, synchronous=NORMAL cannot corrupt the file; a power loss may only drop
    // the last transactions. The tuner commits once per compiled candidate, and FULL would
    // fsync every one of them.
    db.exec("PRAGMA synchronous = NORMAL");
  }
  // Only a new or older file takes the write lock; migrate() re-reads the version under it, as
  // another process may have created or migrated the file meanwhile.
  int before = state.schema_version;
  if (state.empty || state.schema_version < kSchemaVersion) before = schema::migrate(db, path);
  logger().debug("database opened path={} schema_version={} previous_schema_version={}", path,
                 kSchemaVersion, before);
  return Database(std::make_unique<Impl>(path, std::move(db)));
}

Database Database::open_readonly(const std::string& path) {
  if (path.empty()) throw_invalid("empty database path: pass --db PATH or set KERNTUNE_DB");
  if (path == ":memory:") {
    throw_invalid("':memory:' cannot be opened read-only: it would always be empty");
  }
  sql::Connection db = open_existing_readonly(path);
  db.exec("PRAGMA foreign_keys = ON");
  logger().debug("database opened path={} schema_version={} read_only=true", path, kSchemaVersion);
  return Database(std::make_unique<Impl>(path, std::move(db)));
}

const std::string& Database::path() const { return checked(impl_).path; }

std::optional<CubinRecord> Database::find_cubin(const std::string& compile_key) const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Statement query(db,
                       fmt::format("SELECT {} FROM cubins WHERE compile_key = ?", kCubinColumns));
  query.bind(1, compile_key);
  if (!query.step()) return std::nullopt;
  return read_cubin(query);
}

std::vector<CubinRecord> Database::find_cubins_by_source(const std::string& source_key,
                                                         const std::string& arch) const {
  std::vector<CubinRecord> records;
  if (source_key.empty()) return records;
  const Locked impl(impl_);
  sql::Statement query(impl->db, fmt::format("SELECT {} FROM cubins WHERE source_key = ? AND "
                                             "arch = ? ORDER BY created_unix DESC, compile_key",
                                             kCubinColumns));
  query.bind_all(source_key, arch);
  while (query.step()) records.push_back(read_cubin(query));
  return records;
}

std::vector<std::string> Database::cubin_nvrtc_versions() const {
  const Locked impl(impl_);
  sql::Statement query(impl->db,
                       "SELECT DISTINCT nvrtc_version FROM cubins ORDER BY nvrtc_version");
  std::vector<std::string> versions;
  while (query.step()) versions.push_back(query.column_text(0));
  return versions;
}

void Database::put_cubin(const CubinRecord& record) {
  if (record.compile_key.empty()) throw_invalid("put_cubin: the compile key is empty");
  check_names(record.name_expressions, "name_expressions", record.compile_key);
  check_names(record.lowered_names, "lowered_names", record.compile_key);
  if (record.name_expressions.size() != record.lowered_names.size()) {
    throw_invalid(fmt::format("cubin {}: {} name expressions but {} lowered names",
                              record.compile_key, record.name_expressions.size(),
                              record.lowered_names.size()));
  }
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Transaction transaction(db, sql::Transaction::Kind::kWrite);
  sql::Statement insert(db, insert_cubin_sql("INSERT OR REPLACE"));
  bind_cubin(insert, record, now_unix()).run();
  transaction.commit();
}

void Database::delete_cubin(const std::string& compile_key) {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Statement erase(db, "DELETE FROM cubins WHERE compile_key = ?");
  erase.bind(1, compile_key).run();
}

void Database::add_measurements(const std::vector<Measurement>& rows) {
  if (rows.empty()) return;
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  const std::int64_t now = now_unix();
  sql::Transaction transaction(db, sql::Transaction::Kind::kWrite);
  insert_new_measurements(db, rows, now);
  transaction.commit();
}

void Database::finish_run(const std::string& run_id, const std::vector<Measurement>& rows,
                          const std::optional<Winner>& winner) {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  const std::int64_t now = now_unix();
  sql::Transaction transaction(db, sql::Transaction::Kind::kWrite);
  insert_new_measurements(db, rows, now);
  if (winner) {
    Winner row = *winner;
    if (row.created_unix == 0) row.created_unix = now;
    sql::Statement upsert(db, upsert_winner_sql(kSetWinnerRule));
    upsert_winner(db, upsert, row);
  }
  sql::Statement done(db,
                      "UPDATE tuning_runs SET state = 'done', finished_unix = ? WHERE run_id = ?");
  done.bind_all(now, run_id).run();
  transaction.commit();
}

std::vector<Measurement> Database::measurements(const TuningKey& key) const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Statement query(db, fmt::format("SELECT {} FROM measurements WHERE {} ORDER BY id",
                                       kMeasurementColumns, kTuningKeyMatch));
  bind_tuning_key(query, key);
  return read_measurements(query, impl->path);
}

std::vector<Measurement> Database::all_measurements() const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Statement query(db,
                       fmt::format("SELECT {} FROM measurements ORDER BY id", kMeasurementColumns));
  return read_measurements(query, impl->path);
}

std::vector<Measurement> Database::measured_with_prefix(const std::string& device_fingerprint,
                                                        const std::string& problem_prefix) const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  const std::optional<std::string> upper = prefix_upper_bound(problem_prefix);
  sql::Statement query(
      db, fmt::format("SELECT {} FROM measurements WHERE device_fingerprint = ? AND status = ? "
                      "AND problem_key >= ? {} ORDER BY problem_key, id",
                      kMeasurementColumns, upper ? "AND problem_key < ?" : ""));
  query.bind_all(device_fingerprint, std::string_view(to_string(Status::kOk)), problem_prefix);
  if (upper) query.bind(4, *upper);
  return read_measurements(query, impl->path);
}

void Database::set_winner(const Winner& winner) {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  Winner row = winner;
  if (row.created_unix == 0) row.created_unix = now_unix();
  sql::Statement upsert(db, upsert_winner_sql(kSetWinnerRule));
  if (upsert_winner(db, upsert, row) == 0) {
    logger().debug(
        "winner kept: a prediction does not replace a measurement problem={} "
        "device=\"{}\" config={}",
        row.key.problem_key, row.key.device_fingerprint, row.config_key);
  }
}

std::optional<Winner> Database::find_winner(const TuningKey& key) const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Statement query(
      db, fmt::format("SELECT {} FROM winners WHERE {}", kWinnerColumns, kTuningKeyMatch));
  bind_tuning_key(query, key);
  if (!query.step()) return std::nullopt;
  return read_winner(query);
}

std::vector<Winner> Database::winners_with_prefix(const std::string& device_fingerprint,
                                                  const std::string& problem_prefix,
                                                  int protocol_version,
                                                  int template_version) const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  const std::optional<std::string> upper = prefix_upper_bound(problem_prefix);
  sql::Statement query(
      db, fmt::format("SELECT {} FROM winners WHERE device_fingerprint = ? AND "
                      "protocol_version = ? AND template_version = ? AND problem_key >= ? {} "
                      "ORDER BY problem_key",
                      kWinnerColumns, upper ? "AND problem_key < ?" : ""));
  query.bind_all(device_fingerprint, protocol_version, template_version, problem_prefix);
  if (upper) query.bind(5, *upper);
  return read_winners(query);
}

std::vector<Winner> Database::all_winners() const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Statement query(db, fmt::format("SELECT {} FROM winners ORDER BY problem_key, "
                                       "device_fingerprint, protocol_version, template_version",
                                       kWinnerColumns));
  return read_winners(query);
}

std::vector<Winner> Database::winners_of_problem(const std::string& problem_key,
                                                 int protocol_version, int template_version) const {
  const Locked impl(impl_);
  sql::Statement query(
      impl->db, fmt::format("SELECT {} FROM winners WHERE problem_key = ? AND protocol_version = ? "
                            "AND template_version = ? ORDER BY device_fingerprint",
                            kWinnerColumns));
  query.bind_all(problem_key, protocol_version, template_version);
  return read_winners(query);
}

Summary Database::summary() const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Transaction transaction(db, sql::Transaction::Kind::kRead);
  Summary summary;
  sql::Statement cubins(db, "SELECT count(*), coalesce(sum(length(cubin)), 0) FROM cubins");
  if (cubins.step()) {
    summary.num_cubins = cubins.column_int64(0);
    summary.cubin_bytes = cubins.column_int64(1);
  }
  sql::Statement measurements(db, "SELECT count(*) FROM measurements");
  if (measurements.step()) summary.num_measurements = measurements.column_int64(0);
  sql::Statement winners(db, "SELECT count(*) FROM winners");
  if (winners.step()) summary.num_winners = winners.column_int64(0);
  sql::Statement version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (version.step()) summary.schema_version = static_cast<int>(version.column_int64(0));
  transaction.commit();
  return summary;
}

InvalidRows Database::invalid_rows() const {
  constexpr std::size_t kMaxExamples = 5;
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Transaction transaction(db, sql::Transaction::Kind::kRead);
  InvalidRows invalid;
  const auto note = [&](std::int64_t& count, const std::string& row, const std::string& reason) {
    ++count;
    if (invalid.examples.size() < kMaxExamples) invalid.examples.push_back(row + ": " + reason);
  };
  sql::Statement cubins(db, fmt::format("SELECT {} FROM cubins", kCubinColumns));
  while (cubins.step()) {
    const CubinRecord record = read_cubin(cubins);
    if (const std::string problem = cubin_problem(record); !problem.empty())
      note(invalid.num_cubins, "cubin " + printable(record.compile_key), problem);
  }
  sql::Statement measurements(
      db, fmt::format("SELECT {}, id FROM measurements ORDER BY id", kMeasurementColumns));
  while (measurements.step()) {
    const std::string row = fmt::format("measurement id {}", measurements.column_int64(15));
    try {
      const Measurement m = read_measurement(measurements, impl->path);
      if (const std::string problem = measurement_problem(m); !problem.empty())
        note(invalid.num_measurements, row, problem);
    } catch (const Error& error) {
      note(invalid.num_measurements, row, printable(error.what()));
    }
  }
  sql::Statement winners(db, fmt::format("SELECT {} FROM winners", kWinnerColumns));
  while (winners.step()) {
    const Winner w = read_winner(winners);
    if (const std::string problem = winner_problem(w); !problem.empty())
      note(invalid.num_winners, "winner of " + printable(w.key.problem_key), problem);
  }
  transaction.commit();
  return invalid;
}

int schema_version_of(const std::string& path) {
  if (path.empty()) throw_invalid("empty database path: pass --db PATH or set KERNTUNE_DB");
  return open_existing(path).second.schema_version;
}

bool may_write(const std::string& path) {
  return access(path.c_str(), W_OK) == 0 && sql::directory_is_writable(path);
}

std::string default_database_path() {
  if (auto path = env::database_path()) return *path;
  // NOTE: the XDG base directory spec says a relative XDG_CACHE_HOME is invalid and ignored.
  if (auto cache = env::xdg_cache_home(); cache && fs::path(*cache).is_absolute()) {
    return (fs::path(*cache) / "kerntune" / "kerntune.db").string();
  }
  if (auto home = env::home()) {
    return (fs::path(*home) / ".cache" / "kerntune" / "kerntune.db").string();
  }
  throw Error(ErrorKind::kNotFound,
              "no place for the tuning database: KERNTUNE_DB, XDG_CACHE_HOME and HOME are all "
              "unset; pass --db PATH (or set KERNTUNE_DB)");
}

}  // namespace kt::cache
