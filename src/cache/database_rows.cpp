// Records to rows and back: the SQL of the writes, the readers and binders of each table's
// columns, and a measurement's identity.
#include "cache/database_rows.hpp"

#include <fmt/format.h>

#include "cache/database_impl.hpp"
#include "cache/export_format.hpp"
#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/text.hpp"

namespace kt::cache {

namespace {

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

constexpr const char* kWinnerUpdate =
    "config_key = excluded.config_key, median_us = excluded.median_us, "
    "predicted = excluded.predicted, run_id = excluded.run_id, "
    "created_unix = excluded.created_unix";

}  // namespace

void hash_tuning_key(Sha256& hash, const TuningKey& key) {
  hash.update_field(key.problem_key);
  hash.update_field(key.device_fingerprint);
  hash.update_field(std::to_string(key.protocol_version));
  hash.update_field(std::to_string(key.template_version));
}

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

std::vector<Winner> read_winners(sql::Statement& query) {
  std::vector<Winner> rows;
  while (query.step()) rows.push_back(read_winner(query));
  return rows;
}

std::vector<Measurement> read_measurements(sql::Statement& query, const std::string& path,
                                           std::vector<std::string>* skipped) {
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

void insert_new_measurements(sql::Connection& db, const std::vector<Measurement>& rows,
                             std::int64_t now) {
  sql::Statement insert(db, insert_measurement_sql());
  for (Measurement row : rows) {
    if (row.created_unix == 0) row.created_unix = now;
    insert_measurement(db, insert, row);
  }
}

std::int64_t upsert_winner(sql::Connection& db, sql::Statement& insert, const Winner& w) {
  insert.reset();
  insert
      .bind_all(w.key.problem_key, w.key.device_fingerprint, w.key.protocol_version,
                w.key.template_version, w.config_key, w.median_us, w.predicted ? 1 : 0, w.run_id,
                w.created_unix)
      .run();
  return db.changes();
}

}  // namespace kt::cache
