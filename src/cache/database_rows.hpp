// Records to rows and back, shared by the files that implement kt::cache::Database's members:
// the tables' column lists, the SQL of the writes and the rules they keep, the readers and
// binders, and a measurement's identity. Not part of the cache's interface.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/sha256.hpp"

namespace kt::cache {

inline constexpr const char* kCubinColumns =
    "compile_key, arch, source_name, name_expressions, lowered_names, cubin, registers, "
    "spill_bytes, smem_static_bytes, log, nvrtc_version, compile_ms, created_unix, cubin_sha256, "
    "source_key";

inline constexpr const char* kMeasurementColumns =
    "problem_key, device_fingerprint, protocol_version, template_version, config_key, status, "
    "median_us, spread_pct, num_reps, tflops, sm_clock_mhz, predicted_us, detail, run_id, "
    "created_unix";

inline constexpr const char* kWinnerColumns =
    "problem_key, device_fingerprint, protocol_version, template_version, config_key, median_us, "
    "predicted, run_id, created_unix";

inline constexpr const char* kWinnerKey =
    "device_fingerprint, protocol_version, template_version, problem_key";

// set_winner: a new winner replaces the old one, except that a prediction never replaces a
// measurement.
inline constexpr const char* kSetWinnerRule =
    "NOT (excluded.predicted = 1 AND winners.predicted = 0)";

// merge and import: a measured winner replaces a predicted one; between two of a kind, the
// lower median_us wins (a NaN, stored as NULL, loses to any number); ties keep the old one, so
// that merging twice changes nothing.
inline constexpr const char* kMergeWinnerRule =
    "(winners.predicted = 1 AND excluded.predicted = 0) OR "
    "(winners.predicted = excluded.predicted AND (excluded.median_us < winners.median_us OR "
    "(winners.median_us IS NULL AND excluded.median_us IS NOT NULL)))";

// Feeds `key` to `hash` as four length-prefixed fields: problem key, device fingerprint,
// protocol and template versions in decimal. Part of measurement_sha256 and content_sha256:
// changing it changes every stored identity and every bundle's content hash.
void hash_tuning_key(Sha256& hash, const TuningKey& key);

// The identity of a measurement (measurements.row_sha256): every field, length-prefixed.
// Part of schema version 1: changing it needs a migration that recomputes the column.
std::string measurement_sha256(const Measurement& m);

// An upsert of a winner (kWinnerColumns) that replaces the stored one where `rule` holds.
std::string upsert_winner_sql(const char* rule);
// An insert of a measurement (kMeasurementColumns, then row_sha256) that skips a duplicate.
std::string insert_measurement_sql();
// `verb` ("INSERT", "INSERT OR REPLACE") of a cubin (kCubinColumns).
std::string insert_cubin_sql(const char* verb);

// Binds `record` to the parameters of insert_cubin_sql, with the hash of its bytes (whatever
// record.cubin_sha256 says) and `created_unix`.
sql::Statement& bind_cubin(sql::Statement& insert, const CubinRecord& record,
                           std::int64_t created_unix);

// Readers of a row selected as kCubinColumns, kMeasurementColumns (kt::Error of kind kDatabase,
// naming `path`, for an unknown status) and kWinnerColumns, from column 0.
CubinRecord read_cubin(const sql::Statement& row);
Measurement read_measurement(const sql::Statement& row, const std::string& path);
Winner read_winner(const sql::Statement& row);

// Reads every winner `query` yields.
std::vector<Winner> read_winners(sql::Statement& query);

// Reads every measurement `query` yields; a row that cannot be read (an unknown status) is left
// out, with its reason appended to `skipped` (when given) and logged.
std::vector<Measurement> read_measurements(sql::Statement& query, const std::string& path,
                                           std::vector<std::string>* skipped = nullptr);

// Inserts `m` (created_unix already set) through `insert` (insert_measurement_sql) unless an
// identical measurement exists; returns 1 when a row was added.
std::int64_t insert_measurement(sql::Connection& db, sql::Statement& insert, const Measurement& m);

// Inserts `rows` inside the caller's write transaction, stamping those without a creation time
// with `now`.
void insert_new_measurements(sql::Connection& db, const std::vector<Measurement>& rows,
                             std::int64_t now);

// Inserts or updates `w` (created_unix already set) under the rule `insert` (upsert_winner_sql)
// was built with; returns 1 when a row was added or changed.
std::int64_t upsert_winner(sql::Connection& db, sql::Statement& insert, const Winner& w);

}  // namespace kt::cache
