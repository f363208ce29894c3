// Makes the kinds of bad database file a user can meet (truncated, pages overwritten, header
// damaged, another application's SQLite file, not SQLite at all, empty, a directory, an
// unreadable path, a newer schema), each next to what the error about it must say. Shared by
// the Database API tests, the CLI tests and the doctor tests.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/versions.hpp"
#include "support/file_bytes.hpp"
#include "support/tiny_cubin.hpp"

namespace kt::testing {

enum class Damage {
  kTruncated,      // a database cut to a third of its size
  kRandomPages,    // random bytes written over every page but the first
  kHeader,         // the 100-byte SQLite header overwritten
  kForeignSqlite,  // a SQLite file of another application
  kNotSqlite,      // a text file
  kEmpty,          // zero bytes: fine read-write (becomes a database), refused read-only
  kDirectory,      // a directory where the file should be
  kUnreadable,     // a path below a regular file: it can be neither read nor created
  kNewerSchema,    // a kerntune file of a schema this build does not know
};

struct DamageCase {
  Damage damage;
  const char* name;
  // What every error about such a file must contain besides its path.
  std::vector<std::string> needles;
};

// Every case whose file Database::open refuses (kEmpty is only refused read-only).
inline std::vector<DamageCase> refused_damage_cases() {
  return {
      {Damage::kTruncated, "truncated", {"corrupt", "kerntune doctor --db"}},
      {Damage::kRandomPages, "random_pages", {"corrupt", "kerntune doctor --db"}},
      {Damage::kHeader, "header", {"not a SQLite database", "kerntune doctor --db"}},
      {Damage::kForeignSqlite, "foreign_sqlite", {"another application", "kerntune doctor --db"}},
      {Damage::kNotSqlite, "not_sqlite", {"not a SQLite database", "mv "}},
      {Damage::kDirectory, "directory", {"is a directory", "--db PATH"}},
      {Damage::kUnreadable, "unreadable", {"cannot", "--db PATH"}},
      {Damage::kNewerSchema, "newer_schema", {"newer kerntune", "kerntune cache export"}},
  };
}

// A healthy kerntune database of several pages: cubins, measurements and a winner, each passing
// the row checks, with the WAL checkpointed into the file (it is closed on return).
inline void write_healthy_database(const std::string& path) {
  constexpr const char* kConfig = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
  cache::Database db = cache::Database::open(path);
  for (int i = 0; i < 20; ++i) {
    cache::CubinRecord cubin =
        tiny_cubin_record(hex_key(fmt::format("key-{}", i)), {"_Z1kILi1EEvv"}, 2600);
    cubin.nvrtc_version = "13.0";
    db.put_cubin(cubin);
  }
  std::vector<cache::Measurement> rows;
  for (int i = 0; i < 200; ++i) {
    cache::Measurement m;
    m.key = {"gemm:bf16:bf16:nt:64x64x64", "NVIDIA H200/cc90/132sm", kBenchmarkProtocolVersion,
             kGemmTemplateVersion};
    m.config_key = kConfig;
    m.median_us = i + 1;
    m.run_id = "r1";
    rows.push_back(m);
  }
  db.add_measurements(rows);
  cache::Winner w;
  w.key = rows.front().key;
  w.config_key = kConfig;
  w.median_us = 1;
  w.run_id = "r1";
  db.set_winner(w);
}

// Creates at `path` (which must not exist; its directory must) the file `damage` names and
// returns the path to give kerntune, which differs from `path` only for kUnreadable.
inline std::string make_damaged_database(Damage damage, const std::string& path) {
  namespace fs = std::filesystem;
  switch (damage) {
    case Damage::kTruncated: {
      write_healthy_database(path);
      fs::resize_file(path, fs::file_size(path) / 3);
      return path;
    }
    case Damage::kRandomPages: {
      write_healthy_database(path);
      std::string bytes = read_file_bytes(path);
      const std::size_t page_bytes = 4096;
      std::mt19937 random(7);
      for (std::size_t page = page_bytes; page < bytes.size(); page += page_bytes)
        for (std::size_t i = page; i < std::min(bytes.size(), page + 64); ++i)
          bytes[i] = static_cast<char>(random() & 0xff);
      write_file_bytes(path, bytes);
      return path;
    }
    case Damage::kHeader: {
      write_healthy_database(path);
      std::string bytes = read_file_bytes(path);
      for (std::size_t i = 0; i < 100; ++i) bytes[i] = static_cast<char>(0xa5 ^ i);
      write_file_bytes(path, bytes);
      return path;
    }
    case Damage::kForeignSqlite: {
      cache::sql::Connection::open(path, cache::sql::OpenMode::kReadWriteCreate)
          .exec(
              "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); "
              "INSERT INTO users (name) VALUES ('ada')");
      return path;
    }
    case Damage::kNotSqlite:
      write_file_bytes(path, "name,value\nthis,is a csv file and not a database\n");
      return path;
    case Damage::kEmpty:
      write_file_bytes(path, "");
      return path;
    case Damage::kDirectory:
      fs::create_directories(path);
      return path;
    case Damage::kUnreadable:
      write_file_bytes(path, "a regular file");
      return path + "/kerntune.db";
    case Damage::kNewerSchema: {
      write_healthy_database(path);
      cache::sql::Connection::open(path, cache::sql::OpenMode::kReadWriteCreate)
          .exec(fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'",
                            cache::kSchemaVersion + 1));
      return path;
    }
  }
  return path;
}

}  // namespace kt::testing
