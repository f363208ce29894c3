// kt::cache::Database's whole-file members: merge another database in, export and import CSV,
// the content hash of a bundle, and leaving WAL mode for a file that travels alone.
#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "cache/csv.hpp"
#include "cache/database.hpp"
#include "cache/database_impl.hpp"
#include "cache/database_rows.hpp"
#include "cache/export_format.hpp"
#include "cache/row_checks.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/sha256.hpp"
#include "core/text.hpp"

namespace kt::cache {

namespace fs = std::filesystem;

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

}  // namespace kt::cache
