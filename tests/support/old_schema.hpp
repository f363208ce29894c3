// Turns a database of the current schema into one of an older version, as an older kerntune left
// it: each version's additions undone, newest first (src/cache/schema.cpp lists them). For the
// tests of migration and of the commands that refuse an older file.
#pragma once

#include <fmt/format.h>

#include <string>

#include "cache/database.hpp"
#include "cache/sql.hpp"

namespace kt::testing {

// `path` must hold a closed database of the current schema; afterwards it is of `version`.
inline void downgrade_schema(const std::string& path, int version) {
  static_assert(cache::kSchemaVersion == 4, "undo the newest version's additions here too");
  cache::sql::Connection db =
      cache::sql::Connection::open(path, cache::sql::OpenMode::kReadWriteCreate);
  if (version < 4)
    db.exec(
        "DROP INDEX cubins_by_source; ALTER TABLE cubins DROP COLUMN source_key; DROP TABLE "
        "provenance");
  if (version < 3) db.exec("ALTER TABLE cubins DROP COLUMN cubin_sha256");
  if (version < 2) db.exec("DROP TABLE blocklist; DROP TABLE tuning_runs");
  db.exec(fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'", version));
}

}  // namespace kt::testing
