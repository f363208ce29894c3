// The on-disk schema of the tuning database: its DDL, the migration steps from each older
// version, and the inspection that tells a kerntune file from an empty, foreign, corrupt or
// newer one before anything is written to it.
#pragma once

#include <cstdint>
#include <string>

#include "cache/sql.hpp"

namespace kt::cache::schema {

// PRAGMA application_id of every kerntune database: "KTDB" in ASCII.
inline constexpr std::int32_t kApplicationId = 0x4B544442;
// meta('application') of every kerntune database.
inline constexpr const char* kApplicationMarker = "kerntune tuning database";

// What inspect() found in a file.
struct FileState {
  bool empty = false;      // no tables and no application id: a new file
  int schema_version = 0;  // of a kerntune file, in [1, kSchemaVersion]; 0 when empty
};

// Reads the schema of the main database of `db` (whose file is `path`, for messages), runs
// PRAGMA quick_check, and classifies the file. Writes nothing. Throws kt::Error (kDatabase)
// naming `path` and a fix when the file is not a SQLite database, is corrupt, belongs to
// another application, or has a schema newer than kSchemaVersion.
FileState inspect(sql::Connection& db, const std::string& path);

// Brings `db` to kSchemaVersion: creates the schema in an empty file, or runs each migration
// step after the file's version, all in one write transaction. Call after inspect().
// Another process may have migrated the file meanwhile: the version is re-read inside the
// transaction. Returns the version the file had before (0 for a new file).
int migrate(sql::Connection& db, const std::string& path);

// The text of a kt::Error about a file that is not a usable kerntune database: names the
// path, the reason, and what to do.
std::string unusable_file_message(const std::string& path, const std::string& reason);

}  // namespace kt::cache::schema
