// The tuning database's schema (version 4), its migration steps, and the checks that keep
// kerntune from writing into a file that is not its own.
#include "cache/schema.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ctime>
#include <filesystem>
#include <iterator>
#include <optional>
#include <vector>

#include "cache/database.hpp"
#include "core/log.hpp"
#include "core/sha256.hpp"
#include "core/text.hpp"

namespace kt::cache::schema {

namespace {

// Version 1. REAL columns may hold NULL, which reads back as NaN (SQLite stores NaN as NULL).
// measurements.row_sha256 is the identity of a measurement: SHA-256 over every other column
// but id (see database_rows.hpp, measurement_sha256). Its UNIQUE index is what makes merging and
// CSV import idempotent without ever colliding two distinct measurements of one run.
constexpr const char* kCreateVersion1 = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);

CREATE TABLE cubins (
  compile_key       TEXT PRIMARY KEY NOT NULL,  -- hex SHA-256 of everything that shapes the cubin
  arch              TEXT NOT NULL,              -- sm_90a, sm_80, ...
  source_name       TEXT NOT NULL,
  name_expressions  TEXT NOT NULL,              -- newline-joined
  lowered_names     TEXT NOT NULL,              -- newline-joined, same order
  cubin             BLOB NOT NULL,
  registers         INTEGER NOT NULL,
  spill_bytes       INTEGER NOT NULL,
  smem_static_bytes INTEGER NOT NULL,
  log               TEXT NOT NULL,
  nvrtc_version     TEXT NOT NULL,
  compile_ms        REAL,
  created_unix      INTEGER NOT NULL
);

CREATE TABLE measurements (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  problem_key        TEXT NOT NULL,
  device_fingerprint TEXT NOT NULL,
  protocol_version   INTEGER NOT NULL,
  template_version   INTEGER NOT NULL,
  config_key         TEXT NOT NULL,
  status             TEXT NOT NULL,             -- to_string(Status)
  median_us          REAL,
  spread_pct         REAL,
  num_reps           INTEGER NOT NULL,
  tflops             REAL,
  sm_clock_mhz       INTEGER NOT NULL,
  predicted_us       REAL,
  detail             TEXT NOT NULL,
  run_id             TEXT NOT NULL,
  created_unix       INTEGER NOT NULL,
  row_sha256         TEXT NOT NULL
);
CREATE INDEX measurements_by_tuning_key
  ON measurements (problem_key, device_fingerprint, protocol_version, template_version);
CREATE UNIQUE INDEX measurements_by_content ON measurements (row_sha256);

-- Keyed device first, so that the runtime's prefix search over problem keys of one device is
-- a range scan of the primary key.
CREATE TABLE winners (
  problem_key        TEXT NOT NULL,
  device_fingerprint TEXT NOT NULL,
  protocol_version   INTEGER NOT NULL,
  template_version   INTEGER NOT NULL,
  config_key         TEXT NOT NULL,
  median_us          REAL,
  predicted          INTEGER NOT NULL,          -- 1: chosen by the model without a GPU
  run_id             TEXT NOT NULL,
  created_unix       INTEGER NOT NULL,
  PRIMARY KEY (device_fingerprint, protocol_version, template_version, problem_key)
) WITHOUT ROWID;
)sql";

// Version 2 adds what crash isolation and resumable runs need. Existing tables are unchanged
// (statuses are TEXT, so the new ones need no DDL).
// blocklist: kernels that crashed, trapped, faulted or hung, keyed by the device and the compile
// key (which covers the exact generated code, every template, the NVRTC version and the arch,
// but no problem size), so that later runs skip them and a template or toolkit change lifts them.
// tuning_runs: one row per tuning run, so that a killed run can be found and resumed.
constexpr const char* kCreateVersion2 = R"sql(
CREATE TABLE blocklist (
  device_fingerprint TEXT NOT NULL,
  compile_key        TEXT NOT NULL,
  nvrtc_version      TEXT NOT NULL,
  template_version   INTEGER NOT NULL,
  op                 TEXT NOT NULL,             -- gemm, attention
  config_key         TEXT NOT NULL,
  kernel             TEXT NOT NULL,             -- the main kernel's name expression
  problem_key        TEXT NOT NULL,             -- where it failed first
  reason             TEXT NOT NULL,             -- to_string(Status)
  detail             TEXT NOT NULL,
  run_id             TEXT NOT NULL,
  created_unix       INTEGER NOT NULL,
  PRIMARY KEY (device_fingerprint, compile_key)
) WITHOUT ROWID;

CREATE TABLE tuning_runs (
  run_id             TEXT PRIMARY KEY NOT NULL,
  problem_key        TEXT NOT NULL,
  device_fingerprint TEXT NOT NULL,
  protocol_version   INTEGER NOT NULL,
  template_version   INTEGER NOT NULL,
  options_sha256     TEXT NOT NULL,             -- everything that shapes the candidate list
  state              TEXT NOT NULL,             -- running, done
  pid                INTEGER NOT NULL,          -- of the process running it now
  host               TEXT NOT NULL,
  started_unix       INTEGER NOT NULL,
  finished_unix      INTEGER NOT NULL           -- 0 while running
);
CREATE INDEX tuning_runs_by_key
  ON tuning_runs (problem_key, device_fingerprint, protocol_version, template_version, state);
)sql";

// Version 3 adds the SHA-256 of every cubin's bytes, which the runtime checks before it hands
// them to the driver (cuModuleLoadData takes no length and trusts the image's headers). The
// column is filled for the rows already there by fill_cubin_sha256.
constexpr const char* kCreateVersion3 = R"sql(
ALTER TABLE cubins ADD COLUMN cubin_sha256 TEXT NOT NULL DEFAULT '';
)sql";

// Version 4 adds what fleet bundles need. cubins.source_key: the SHA-256 of everything the
// compile key covers but the NVRTC version (gen::source_key), by which a runtime finds a cubin
// without loading NVRTC ('' for the rows already there: their source is not stored, so they stay
// reachable by compile key only). provenance: what a shard or bundle says of itself (versions,
// devices, manifest, counts, content hash), as name -> value rows.
constexpr const char* kCreateVersion4 = R"sql(
ALTER TABLE cubins ADD COLUMN source_key TEXT NOT NULL DEFAULT '';
CREATE INDEX cubins_by_source ON cubins (source_key, arch);
CREATE TABLE provenance (
  name  TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
)sql";

// Sets cubins.cubin_sha256 of every row to the hash of its bytes as they are.
void fill_cubin_sha256(sql::Connection& db) {
  sql::Statement rows(db, "SELECT compile_key, cubin FROM cubins");
  sql::Statement update(db, "UPDATE cubins SET cubin_sha256 = ? WHERE compile_key = ?");
  while (rows.step()) {
    const std::vector<char> bytes = rows.column_blob(1);
    update.reset();
    update.bind_all(sha256_hex(std::string_view(bytes.data(), bytes.size())), rows.column_text(0))
        .run();
  }
}

// One step of the schema's history: SQL, then `fill` (when set) over the rows already there,
// that turn version `from_version` into `from_version + 1`. Step 0 creates the schema in an
// empty file.
struct Migration {
  int from_version;
  const char* description;
  const char* sql;
  void (*fill)(sql::Connection& db);
};

constexpr Migration kMigrations[] = {
    {0, "create the version 1 schema", kCreateVersion1, nullptr},
    {1, "add the blocklist and tuning_runs tables", kCreateVersion2, nullptr},
    {2, "add cubins.cubin_sha256", kCreateVersion3, fill_cubin_sha256},
    {3, "add cubins.source_key and the provenance table", kCreateVersion4, nullptr},
};

static_assert(std::size(kMigrations) == static_cast<std::size_t>(kSchemaVersion),
              "every schema version needs exactly one migration step");

std::vector<std::string> table_names(sql::Connection& db) {
  sql::Statement query(db,
                       "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE "
                       "'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  std::vector<std::string> names;
  while (query.step()) names.push_back(query.column_text(0));
  return names;
}

std::int64_t application_id(sql::Connection& db) {
  sql::Statement query(db, "PRAGMA application_id");
  return query.step() ? query.column_int64(0) : 0;
}

// The first problems PRAGMA quick_check reports, or "" when it says "ok".
std::string quick_check_problems(sql::Connection& db) {
  constexpr int kMaxProblems = 3;
  sql::Statement query(db, "PRAGMA quick_check(3)");
  std::vector<std::string> problems;
  while (query.step()) {
    std::string row = query.column_text(0);
    if (row == "ok") continue;
    if (static_cast<int>(problems.size()) < kMaxProblems) problems.push_back(std::move(row));
  }
  return fmt::format("{}", fmt::join(problems, "; "));
}

std::optional<std::string> meta_value(sql::Connection& db, const char* key) {
  sql::Statement query(db, "SELECT value FROM meta WHERE key = ?");
  query.bind(1, std::string_view(key));
  if (!query.step()) return std::nullopt;
  return query.column_text(0);
}

// The schema version recorded in a kerntune file's meta table; 0 when there is no meta table
// (an empty file). Throws the reason as a string when the value is not a version.
int recorded_version(sql::Connection& db, const std::string& path) {
  bool has_meta = false;
  for (const std::string& name : table_names(db)) has_meta = has_meta || name == "meta";
  if (!has_meta) return 0;
  const std::optional<std::string> text = meta_value(db, "schema_version");
  std::int64_t version = -1;
  if (text) {
    try {
      version = parse_int(*text, "schema_version");
    } catch (const Error&) {
      version = -1;
    }
  }
  if (version < 1 || version > 1'000'000) {
    throw Error(ErrorKind::kDatabase,
                unusable_file_message(
                    path, fmt::format("its meta table holds schema_version '{}', which is not a "
                                      "schema version: the file is damaged",
                                      text.value_or("(missing)"))));
  }
  return static_cast<int>(version);
}

std::uint32_t big_endian(const unsigned char* bytes, int count) {
  std::uint32_t value = 0;
  for (int i = 0; i < count; ++i) value = value << 8 | bytes[i];
  return value;
}

// Why the database file of `db` (at `path`) is shorter than its SQLite header says, or "": the
// file must be a whole number of pages and hold every page the header counts. Read through
// SQLite's own handle under the caller's shared lock, and only where no other process extends the
// file meanwhile: a rollback-journal file (a writer needs an exclusive lock to touch it), or a WAL
// file without a -wal beside it (nothing to checkpoint).
std::string truncation_problem(sql::Connection& db, const std::string& path) {
  const auto [head, size] = db.main_file_head(100);
  if (head.size() < 100 || size < 100) return "";
  const auto* header = reinterpret_cast<const unsigned char*>(head.data());
  const int write_version = header[18];  // 1: rollback journal, 2: WAL
  if (write_version == 2) {
    std::error_code error;
    const auto wal_size = std::filesystem::file_size(path + "-wal", error);  // stat, no open
    if (!error && wal_size > 0) return "";
  } else if (write_version != 1) {
    return "";
  }
  std::uint64_t page_size = big_endian(header + 16, 2);
  if (page_size == 1) page_size = 65536;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0) return "";
  const auto bytes = std::uint64_t(size);
  if (bytes % page_size != 0)
    return fmt::format(
        "it is corrupt: truncated to {} bytes, not a whole number of its {}-byte pages", bytes,
        page_size);
  // NOTE: the header's page count is valid only when its change counter equals the
  // version-valid-for number (SQLite's file format, section 1.3.7).
  const std::uint64_t pages = big_endian(header + 28, 4);
  if (pages == 0 || big_endian(header + 24, 4) != big_endian(header + 92, 4)) return "";
  if (bytes < pages * page_size)
    return fmt::format(
        "it is corrupt: truncated to {} bytes, but its header counts {} pages of {} bytes ({} "
        "bytes)",
        bytes, pages, page_size, pages * page_size);
  return "";
}

void set_meta(sql::Connection& db, const char* key, const std::string& value) {
  sql::Statement upsert(db,
                        "INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  upsert.bind_all(std::string_view(key), std::string_view(value)).run();
}

}  // namespace

std::string unusable_file_message(const std::string& path, const std::string& reason) {
  return fmt::format(
      "'{0}' is not a usable kerntune database: {1}. The file was left untouched. Diagnose it "
      "with `kerntune doctor --db '{0}'`; then move it aside (`mv '{0}' '{0}.bad'`) and let "
      "kerntune create a new one, restoring results exported earlier with `kerntune cache "
      "import BACKUP.csv`, or pass --db PATH to use another file",
      path, reason);
}

FileState inspect(sql::Connection& db, const std::string& path) {
  std::vector<std::string> tables;
  std::int64_t app_id = 0;
  try {
    // Reading the schema reads the header: a file that is not SQLite fails here.
    if (path != ":memory:") {
      // A read transaction that has read the schema (or failed to) holds the shared lock
      // truncation_problem needs; a cut file is named as such, whatever SQLite made of it.
      sql::Transaction snapshot(db, sql::Transaction::Kind::kRead);
      std::string truncated;
      try {
        table_names(db);
      } catch (const sql::SqliteError&) {
        truncated = truncation_problem(db, path);
        if (truncated.empty()) throw;
      }
      if (truncated.empty()) truncated = truncation_problem(db, path);
      if (!truncated.empty())
        throw Error(ErrorKind::kDatabase, unusable_file_message(path, truncated));
      snapshot.commit();
    }
    tables = table_names(db);
    app_id = application_id(db);
    const std::string problems = quick_check_problems(db);
    if (!problems.empty()) {
      throw Error(ErrorKind::kDatabase,
                  unusable_file_message(
                      path, fmt::format("it is corrupt (PRAGMA quick_check: {})", problems)));
    }
  } catch (const sql::SqliteError& error) {
    if (error.is_not_a_database()) {
      throw Error(ErrorKind::kDatabase,
                  unusable_file_message(
                      path, "it is not a SQLite database, or it is truncated or corrupt"));
    }
    throw;
  }

  if (tables.empty() && app_id == 0) return FileState{.empty = true, .schema_version = 0};
  if (app_id != kApplicationId) {
    const std::string owner = app_id == 0
                                  ? std::string("it has no kerntune marker")
                                  : fmt::format("its application_id is {:#x}, kerntune's is {:#x}",
                                                app_id, kApplicationId);
    throw Error(
        ErrorKind::kDatabase,
        unusable_file_message(
            path,
            fmt::format("it is a SQLite database of another application ({}; "
                        "tables: {})",
                        owner,
                        tables.empty() ? "none" : fmt::format("{}", fmt::join(tables, ", ")))));
  }
  const int version = recorded_version(db, path);
  if (version == 0 || meta_value(db, "application") != std::string(kApplicationMarker)) {
    throw Error(ErrorKind::kDatabase,
                unusable_file_message(path,
                                      "it carries kerntune's application_id but not its meta "
                                      "table: the file is damaged"));
  }
  if (version > kSchemaVersion) {
    throw Error(ErrorKind::kDatabase,
                fmt::format("'{}' has schema version {}, but this kerntune understands versions "
                            "up to {}: it was written by a newer kerntune. Use that newer "
                            "kerntune (or export it there with `kerntune cache export FILE.csv` "
                            "and import the CSV here), or pass --db PATH to use another file; "
                            "this one was left untouched. `kerntune doctor --db '{}'` shows "
                            "the details",
                            path, version, kSchemaVersion, path));
  }
  return FileState{.empty = false, .schema_version = version};
}

int migrate(sql::Connection& db, const std::string& path) {
  sql::Transaction transaction(db, sql::Transaction::Kind::kWrite);
  // Another process may have created or migrated the file since inspect().
  const int before = recorded_version(db, path);
  if (before > kSchemaVersion) {
    throw Error(ErrorKind::kDatabase,
                fmt::format("'{}' was upgraded to schema version {} by a newer kerntune while "
                            "opening it; this kerntune understands versions up to {}",
                            path, before, kSchemaVersion));
  }
  int version = before;
  for (const Migration& step : kMigrations) {
    if (step.from_version != version) continue;
    logger().info("database migration path={} from={} to={} step=\"{}\"", path, version,
                  version + 1, step.description);
    db.exec(step.sql);
    if (step.fill != nullptr) step.fill(db);
    ++version;
    set_meta(db, "schema_version", std::to_string(version));
  }
  if (version != kSchemaVersion) {
    throw Error(ErrorKind::kInternal,
                fmt::format("no migration path from schema version {} to {} for '{}'", before,
                            kSchemaVersion, path));
  }
  if (before == 0) {
    db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
    set_meta(db, "application", kApplicationMarker);
    set_meta(db, "created_unix", std::to_string(static_cast<std::int64_t>(std::time(nullptr))));
  }
  transaction.commit();
  return before;
}

}  // namespace kt::cache::schema
