// The tuning database: records to rows and back, merge, CSV export/import and the default
// path. One connection per Database, guarded by a mutex; every write is one transaction.
#include "cache/database.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <utility>

#include "cache/csv.hpp"
#include "cache/database_impl.hpp"
#include "cache/export_format.hpp"
#include "cache/row_checks.hpp"
#include "cache/schema.hpp"
#include "cache/sql.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/sha256.hpp"
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

// Feeds `key` to `hash` as four length-prefixed fields: problem key, device fingerprint,
// protocol and template versions in decimal. Part of measurement_sha256 and content_sha256:
// changing it changes every stored identity and every bundle's content hash.
void hash_tuning_key(Sha256& hash, const TuningKey& key) {
  hash.update_field(key.problem_key);
  hash.update_field(key.device_fingerprint);
  hash.update_field(std::to_string(key.protocol_version));
  hash.update_field(std::to_string(key.template_version));
}

// The identity of a measurement (measurements.row_sha256): every field, length-prefixed.
// Part of schema version 1: changing it needs a migration that recomputes the column.
std::string measurement_sha256(const Measurement& m) {
  Sha256 hash;
  hash.update_field("kerntune measurement v1");
  hash_tuning_key(hash, m.key);
  hash.update_field(m.config_key);
  hash.update_field(to_string(m.status));
  hash.update_field(canonical_real(m.median_us));
  hash.update_field(canonical_real(m.spread_pct));
  hash.update_field(std::to_string(m.num_reps));
  hash.update_field(canonical_real(m.tflops));
  hash.update_field(std::to_string(m.sm_clock_mhz));
  hash.update_field(canonical_real(m.predicted_us));
  hash.update_field(m.detail);
  hash.update_field(m.run_id);
  hash.update_field(std::to_string(m.created_unix));
  return hash.hex_digest();
}

std::string join_lines(const std::vector<std::string>& names) {
  std::string joined;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) joined += '\n';
    joined += names[i];
  }
  return joined;
}

std::vector<std::string> split_lines(const std::string& joined) {
  std::vector<std::string> names;
  if (joined.empty()) return names;
  for (const std::string_view part : split(joined, '\n')) names.emplace_back(part);
  return names;
}

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

// ---- rows <-> records ------------------------------------------------------------------------

constexpr const char* kCubinColumns =
    "compile_key, arch, source_name, name_expressions, lowered_names, cubin, registers, "
    "spill_bytes, smem_static_bytes, log, nvrtc_version, compile_ms, created_unix, cubin_sha256, "
    "source_key";

constexpr const char* kMeasurementColumns =
    "problem_key, device_fingerprint, protocol_version, template_version, config_key, status, "
    "median_us, spread_pct, num_reps, tflops, sm_clock_mhz, predicted_us, detail, run_id, "
    "created_unix";

constexpr const char* kWinnerColumns =
    "problem_key, device_fingerprint, protocol_version, template_version, config_key, median_us, "
    "predicted, run_id, created_unix";

constexpr const char* kWinnerKey =
    "device_fingerprint, protocol_version, template_version, problem_key";

constexpr const char* kWinnerUpdate =
    "config_key = excluded.config_key, median_us = excluded.median_us, "
    "predicted = excluded.predicted, run_id = excluded.run_id, "
    "created_unix = excluded.created_unix";

// set_winner: a new winner replaces the old one, except that a prediction never replaces a
// measurement.
constexpr const char* kSetWinnerRule = "NOT (excluded.predicted = 1 AND winners.predicted = 0)";

// merge and import: a measured winner replaces a predicted one; between two of a kind, the
// lower median_us wins (a NaN, stored as NULL, loses to any number); ties keep the old one, so
// that merging twice changes nothing.
constexpr const char* kMergeWinnerRule =
    "(winners.predicted = 1 AND excluded.predicted = 0) OR "
    "(winners.predicted = excluded.predicted AND (excluded.median_us < winners.median_us OR "
    "(winners.median_us IS NULL AND excluded.median_us IS NOT NULL)))";

std::string upsert_winner_sql(const char* rule) {
  return fmt::format(
      "INSERT INTO winners ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT ({}) DO UPDATE "
      "SET {} WHERE {}",
      kWinnerColumns, kWinnerKey, kWinnerUpdate, rule);
}

std::string insert_measurement_sql() {
  return fmt::format(
      "INSERT INTO measurements ({}, row_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?) ON CONFLICT (row_sha256) DO NOTHING",
      kMeasurementColumns);
}

std::string insert_cubin_sql(const char* verb) {
  return fmt::format("{} INTO cubins ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     verb, kCubinColumns);
}

// Binds `record` to the parameters of insert_cubin_sql, with the hash of its bytes (whatever
// record.cubin_sha256 says) and `created_unix`.
sql::Statement& bind_cubin(sql::Statement& insert, const CubinRecord& record,
                           std::int64_t created_unix) {
  return insert.bind_all(
      record.compile_key, record.arch, record.source_name, join_lines(record.name_expressions),
      join_lines(record.lowered_names), record.cubin, record.registers, record.spill_bytes,
      record.smem_static_bytes, record.log, record.nvrtc_version, record.compile_ms, created_unix,
      cubin_sha256(record.cubin), record.source_key);
}

CubinRecord read_cubin(const sql::Statement& row) {
  CubinRecord r;
  row.read_columns(0, r.compile_key, r.arch, r.source_name);
  r.name_expressions = split_lines(row.column_text(3));
  r.lowered_names = split_lines(row.column_text(4));
  row.read_columns(5, r.cubin, r.registers, r.spill_bytes, r.smem_static_bytes, r.log,
                   r.nvrtc_version, r.compile_ms);
  // Column 12, created_unix, is not part of a record.
  row.read_columns(13, r.cubin_sha256, r.source_key);
  return r;
}

// Reads the columns of kMeasurementColumns, starting at column 0.
Measurement read_measurement(const sql::Statement& row, const std::string& path) {
  Measurement m;
  m.key = read_tuning_key(row, 0);
  m.config_key = row.column_text(4);
  const std::string status = row.column_text(5);
  try {
    m.status = parse_status(status);
  } catch (const Error& error) {
    throw Error(ErrorKind::kDatabase, fmt::format("database '{}': a measurement of {} has an "
                                                  "unknown status: {}",
                                                  path, m.config_key, error.what()));
  }
  row.read_columns(6, m.median_us, m.spread_pct, m.num_reps, m.tflops, m.sm_clock_mhz,
                   m.predicted_us, m.detail, m.run_id, m.created_unix);
  return m;
}

Winner read_winner(const sql::Statement& row) {
  Winner w;
  w.key = read_tuning_key(row, 0);
  row.read_columns(4, w.config_key, w.median_us);
  w.predicted = row.column_int64(6) != 0;
  row.read_columns(7, w.run_id, w.created_unix);
  return w;
}

// Reads every winner `query` yields.
std::vector<Winner> read_winners(sql::Statement& query) {
  std::vector<Winner> rows;
  while (query.step()) rows.push_back(read_winner(query));
  return rows;
}

// Reads every measurement `query` yields; a row that cannot be read (an unknown status) is left
// out, with its reason appended to `skipped` (when given) and logged.
std::vector<Measurement> read_measurements(sql::Statement& query, const std::string& path,
                                           std::vector<std::string>* skipped = nullptr) {
  std::vector<Measurement> rows;
  while (query.step()) {
    try {
      rows.push_back(read_measurement(query, path));
    } catch (const Error& error) {
      logger().warn("database row skipped error=\"{}\"", printable(error.what()));
      if (skipped != nullptr) skipped->push_back(printable(error.what()));
    }
  }
  return rows;
}

// Inserts `m` (created_unix already set) unless an identical measurement exists; returns 1
// when a row was added.
std::int64_t insert_measurement(sql::Connection& db, sql::Statement& insert, const Measurement& m) {
  insert.reset();
  insert
      .bind_all(m.key.problem_key, m.key.device_fingerprint, m.key.protocol_version,
                m.key.template_version, m.config_key, std::string_view(to_string(m.status)),
                m.median_us, m.spread_pct, m.num_reps, m.tflops, m.sm_clock_mhz, m.predicted_us,
                m.detail, m.run_id, m.created_unix)
      .bind(16, measurement_sha256(m))
      .run();
  return db.changes();
}

// Inserts `rows` inside the caller's write transaction, stamping those without a creation time
// with `now`.
void insert_new_measurements(sql::Connection& db, const std::vector<Measurement>& rows,
                             std::int64_t now) {
  sql::Statement insert(db, insert_measurement_sql());
  for (Measurement row : rows) {
    if (row.created_unix == 0) row.created_unix = now;
    insert_measurement(db, insert, row);
  }
}

// Inserts or updates `w` (created_unix already set) under the rule `insert` was built with;
// returns 1 when a row was added or changed.
std::int64_t upsert_winner(sql::Connection& db, sql::Statement& insert, const Winner& w) {
  insert.reset();
  insert
      .bind_all(w.key.problem_key, w.key.device_fingerprint, w.key.protocol_version,
                w.key.template_version, w.config_key, w.median_us, w.predicted ? 1 : 0, w.run_id,
                w.created_unix)
      .run();
  return db.changes();
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

// A connection to a kerntune file that exists and needs no migration, for reading only.
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

}  // namespace

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

std::int64_t Database::merge_from(const std::string& other_path,
                                  std::vector<std::string>* skipped) {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  // The source is read on a connection of its own, so that a bad file is reported as clearly as
  // by open(), and every row passes through the checks before it is written here.
  sql::Connection source = open_existing_readonly(other_path);
  if (same_file(impl->path, other_path)) return 0;
  const auto skip = [&](const std::string& row, const std::string& reason) {
    const std::string line = fmt::format("{}: {}: {}", other_path, row, reason);
    logger().warn("merge row skipped reason=\"{}\"", line);
    if (skipped != nullptr) skipped->push_back(line);
  };

  sql::Transaction snapshot(source, sql::Transaction::Kind::kRead);
  sql::Transaction transaction(db, sql::Transaction::Kind::kWrite);
  std::int64_t added = 0;
  sql::Statement cubins(source,
                        fmt::format("SELECT {} FROM cubins ORDER BY compile_key", kCubinColumns));
  sql::Statement insert_cubin(db,
                              insert_cubin_sql("INSERT") + " ON CONFLICT (compile_key) DO NOTHING");
  while (cubins.step()) {
    const CubinRecord record = read_cubin(cubins);
    if (const std::string problem = cubin_problem(record); !problem.empty()) {
      skip(fmt::format("cubin {}", printable(record.compile_key)), problem);
      continue;
    }
    insert_cubin.reset();
    bind_cubin(insert_cubin, record, cubins.column_int64(12)).run();
    added += db.changes();
  }
  sql::Statement measurements(
      source, fmt::format("SELECT {}, id FROM measurements ORDER BY id", kMeasurementColumns));
  sql::Statement insert(db, insert_measurement_sql());
  while (measurements.step()) {
    const std::string row = fmt::format("measurement id {}", measurements.column_int64(15));
    Measurement m;
    try {
      m = read_measurement(measurements, other_path);
    } catch (const Error& error) {
      skip(row, printable(error.what()));
      continue;
    }
    if (const std::string problem = measurement_problem(m); !problem.empty()) {
      skip(row, problem);
      continue;
    }
    added += insert_measurement(db, insert, m);
  }
  sql::Statement winners(source, fmt::format("SELECT {} FROM winners", kWinnerColumns));
  sql::Statement upsert(db, upsert_winner_sql(kMergeWinnerRule));
  while (winners.step()) {
    const Winner w = read_winner(winners);
    if (const std::string problem = winner_problem(w); !problem.empty()) {
      skip(fmt::format("winner of {} on {}", printable(w.key.problem_key),
                       printable(w.key.device_fingerprint)),
           problem);
      continue;
    }
    added += upsert_winner(db, upsert, w);
  }
  transaction.commit();
  snapshot.commit();
  logger().info("database merged path={} from={} rows_added={}", impl->path, other_path, added);
  return added;
}

void Database::export_csv(const std::string& out_path, ExistingFile existing,
                          std::vector<std::string>* skipped) const {
  Impl& impl = checked(impl_);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    if (same_file(impl.path + suffix, out_path)) {
      throw_invalid(
          fmt::format("'{}' is the database being exported{}: write the CSV to "
                      "another file",
                      out_path, *suffix != '\0' ? " (its journal)" : ""));
    }
  }
  std::error_code error;
  if (existing == ExistingFile::kRefuse && fs::exists(fs::symlink_status(out_path, error))) {
    throw_invalid(
        fmt::format("'{}' exists: pass --force to replace it, or name a new file", out_path));
  }
  std::string text;
  csv::append_record(text, export_columns());
  {
    const std::lock_guard<std::mutex> lock(impl.mutex);
    sql::Connection& db = impl.db;
    sql::Transaction transaction(db, sql::Transaction::Kind::kRead);
    sql::Statement measurements(
        db, fmt::format("SELECT {} FROM measurements ORDER BY id", kMeasurementColumns));
    for (const Measurement& m : read_measurements(measurements, impl.path, skipped))
      csv::append_record(text, export_fields(m));
    sql::Statement winners(db, fmt::format("SELECT {} FROM winners ORDER BY problem_key, "
                                           "device_fingerprint, protocol_version, "
                                           "template_version",
                                           kWinnerColumns));
    while (winners.step()) csv::append_record(text, export_fields(read_winner(winners)));
    transaction.commit();
  }
  // The text goes to a file of its own first, so that a failed write leaves `out_path` as it was.
  const std::string temporary = fmt::format("{}.tmp{}", out_path, getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (out) out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      fs::remove(temporary, error);
      throw Error(ErrorKind::kInvalidArgument,
                  fmt::format("cannot write '{}': {}", out_path, reason));
    }
  }
  fs::rename(temporary, out_path, error);
  if (error) {
    fs::remove(temporary, error);
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("cannot write '{}': {}", out_path, error.message()));
  }
}

std::int64_t Database::import_csv(const std::string& in_path, std::vector<std::string>* skipped) {
  // Parse everything first: a malformed file adds nothing.
  const ExportContents contents = read_export(in_path);
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  // Stores each of `rows` that `problem_of` finds nothing wrong with through `store` (which
  // returns the rows it added); logs and lists the others by the line they started on.
  const auto import_rows = [&](const auto& rows, const std::vector<std::int64_t>& lines,
                               const auto& problem_of, const auto& store) {
    std::int64_t added = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (const std::string problem = problem_of(rows[i]); !problem.empty()) {
        const std::string text = fmt::format("{}:{}: {}", in_path, lines[i], problem);
        logger().warn("import row skipped reason=\"{}\"", text);
        if (skipped != nullptr) skipped->push_back(text);
        continue;
      }
      added += store(rows[i]);
    }
    return added;
  };
  sql::Transaction transaction(db, sql::Transaction::Kind::kWrite);
  sql::Statement insert(db, insert_measurement_sql());
  std::int64_t added =
      import_rows(contents.measurements, contents.measurement_lines, measurement_problem,
                  [&](const Measurement& m) { return insert_measurement(db, insert, m); });
  sql::Statement upsert(db, upsert_winner_sql(kMergeWinnerRule));
  added += import_rows(contents.winners, contents.winner_lines, winner_problem,
                       [&](const Winner& w) { return upsert_winner(db, upsert, w); });
  transaction.commit();
  logger().info("database imported path={} from={} rows_added={}", impl->path, in_path, added);
  return added;
}

std::string Database::content_sha256() const {
  const Locked impl(impl_);
  sql::Connection& db = impl->db;
  sql::Transaction transaction(db, sql::Transaction::Kind::kRead);
  Sha256 hash;
  hash.update_field("kerntune content v1");
  sql::Statement winners(
      db, fmt::format("SELECT {} FROM winners ORDER BY {}", kWinnerColumns, kWinnerKey));
  while (winners.step()) {
    const Winner w = read_winner(winners);
    hash.update_field("winner");
    hash_tuning_key(hash, w.key);
    hash.update_field(w.config_key);
    hash.update_field(canonical_real(w.median_us));
    hash.update_field(w.predicted ? "predicted" : "measured");
  }
  sql::Statement cubins(db,
                        "SELECT compile_key, source_key, arch, cubin FROM cubins ORDER BY "
                        "compile_key");
  while (cubins.step()) {
    const std::vector<char> bytes = cubins.column_blob(3);
    hash.update_field("cubin");
    hash.update_field(cubins.column_text(0));
    hash.update_field(cubins.column_text(1));
    hash.update_field(cubins.column_text(2));
    hash.update_field(cubin_sha256(bytes));
  }
  // A measurement counts by its identity over every field as read now (a row of an unknown
  // status, which no reader takes, by its stored identity).
  std::vector<std::string> identities;
  sql::Statement measurements(
      db, fmt::format("SELECT {}, row_sha256 FROM measurements", kMeasurementColumns));
  while (measurements.step()) {
    try {
      identities.push_back(measurement_sha256(read_measurement(measurements, impl->path)));
    } catch (const Error&) {
      identities.push_back("unread " + measurements.column_text(15));
    }
  }
  std::sort(identities.begin(), identities.end());
  for (const std::string& identity : identities) {
    hash.update_field("measurement");
    hash.update_field(identity);
  }
  transaction.commit();
  return hash.hex_digest();
}

void Database::make_self_contained() {
  const Locked impl(impl_);
  if (impl->path == ":memory:") return;
  impl->db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  sql::Statement mode(impl->db, "PRAGMA journal_mode = DELETE");
  const std::string now = mode.step() ? mode.column_text(0) : "";
  if (now != "delete")
    throw Error(
        ErrorKind::kDatabase,
        fmt::format("database '{}' could not leave WAL mode (journal_mode is '{}'): another "
                    "process has it open; close it and try again",
                    impl->path, now));
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
