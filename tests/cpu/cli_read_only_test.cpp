// The commands that only read a database (info, explain, cache ls, show, export and blocklist,
// doctor, report; with and without --json) never create one, never migrate an older one and never
// write one: a missing path stays missing (its directory too), an older schema is reported with the
// command that upgrades it (`kerntune cache migrate`, the one that does) and the file keeps its
// bytes and modification time.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "support/cli_runner.hpp"
#include "support/damaged_database.hpp"
#include "support/file_bytes.hpp"
#include "support/old_schema.hpp"
#include "support/scratch_dir.hpp"

namespace kt::testing {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Every read-only command line, each followed by --db PATH; `csv` is where export writes.
std::vector<std::string> read_only_commands(const std::string& csv) {
  return {"info",
          "info --json",
          "explain --shape 64x64x64",
          "explain --json --shape 64x64x64",
          "cache ls",
          "cache ls --json",
          "cache show --shape 64x64x64",
          "cache show --json --shape 64x64x64",
          "cache export " + shell_quote(csv),
          "cache blocklist",
          "doctor",
          "doctor --json",
          "report --json"};
}

// A file's bytes and modification time, to tell whether anything wrote it.
struct FileSnapshot {
  std::string bytes;
  fs::file_time_type modified;
  bool operator==(const FileSnapshot&) const = default;
};

FileSnapshot snapshot(const std::string& path) {
  return {read_file_bytes(path), fs::last_write_time(path)};
}

// A database of schema version 2 (before cubins.cubin_sha256), as an older kerntune left it.
void write_schema_2_database(const std::string& path) {
  write_healthy_database(path);
  kt::testing::downgrade_schema(path, 2);
  ASSERT_EQ(cache::schema_version_of(path), 2);
}

// Nothing was written beside `path` either: no journal, and a -wal (which a reader of a WAL
// database may leave in a writable directory) without a byte in it.
void expect_no_writes_beside(const std::string& path) {
  EXPECT_FALSE(fs::exists(path + "-journal"));
  std::error_code error;
  const auto wal_bytes = fs::file_size(path + "-wal", error);
  EXPECT_TRUE(error || wal_bytes == 0) << wal_bytes << " bytes in " << path << "-wal";
}

TEST(CliReadOnly, NoCommandThatOnlyReadsCreatesADatabaseOrItsDirectory) {
  ScratchDir dir;
  const std::string db = dir.file("not/yet/kerntune.db");
  for (const std::string& command : read_only_commands(dir.file("out.csv"))) {
    SCOPED_TRACE(command);
    const CliResult r = run_cli(command + " --db " + shell_quote(db), dir.file("unused.db"));
    if (command.rfind("cache export", 0) == 0 || command.rfind("report", 0) == 0) {
      EXPECT_EQ(r.status, 1) << r.output;  // nothing to export or report
      const std::string name = command.rfind("report", 0) == 0 ? "report" : "cache export";
      EXPECT_TRUE(contains(r.output, name + " needs a database")) << r.output;
    } else if (command.rfind("doctor", 0) != 0) {
      EXPECT_EQ(r.status, 0) << r.output;
    }
    if (command.rfind("info", 0) == 0 || command.rfind("cache ls", 0) == 0)
      EXPECT_TRUE(contains(r.output, command.find("--json") != std::string::npos
                                         ? "\"exists\": false"
                                         : "no database at '" + db + "' yet"))
          << r.output;
    EXPECT_FALSE(fs::exists(dir.file("not"))) << r.output;
    EXPECT_FALSE(fs::exists(dir.file("out.csv"))) << r.output;
  }
}

// The default database ($XDG_CACHE_HOME/kerntune/kerntune.db) is not created either.
TEST(CliReadOnly, TheDefaultDatabaseIsNotCreatedEither) {
  ScratchDir dir;
  const std::string env = "env -u KERNTUNE_DB XDG_CACHE_HOME=" + shell_quote(dir.file("cache")) +
                          " HOME=" + shell_quote(dir.file("home"));
  for (const std::string& command : read_only_commands(dir.file("out.csv"))) {
    SCOPED_TRACE(command);
    const CliResult r = run_cli(command, dir.file("unused.db"), env);
    EXPECT_TRUE(command.rfind("info", 0) != 0 ||
                contains(r.output, dir.file("cache/kerntune/kerntune.db")))
        << r.output;
    EXPECT_FALSE(fs::exists(dir.file("cache"))) << r.output;
    EXPECT_FALSE(fs::exists(dir.file("home"))) << r.output;
  }
}

TEST(CliReadOnly, AnOlderSchemaIsReportedWithTheMigrateCommandAndLeftAsItIs) {
  ScratchDir dir;
  const std::string db = dir.file("old.db");
  write_schema_2_database(db);
  const FileSnapshot before = snapshot(db);
  for (const std::string& command : read_only_commands(dir.file("out.csv"))) {
    SCOPED_TRACE(command);
    const CliResult r = run_cli(command + " --db " + shell_quote(db), dir.file("unused.db"));
    EXPECT_TRUE(contains(r.output, "schema version 2")) << r.output;
    EXPECT_TRUE(contains(r.output, "kerntune cache migrate --db")) << r.output;
    if (command.rfind("cache", 0) == 0 || command.rfind("report", 0) == 0) {
      EXPECT_EQ(r.status, 1) << r.output;  // they have nothing to show but the error
      EXPECT_TRUE(contains(r.output, "kerntune: database error: ")) << r.output;
    }
    if (command.rfind("info", 0) == 0 || command.rfind("explain", 0) == 0) {
      EXPECT_EQ(r.status, 0) << r.output;  // the rest of what they show does not need it
    }
    EXPECT_TRUE(snapshot(db) == before) << "the file was written";
    EXPECT_EQ(cache::schema_version_of(db), 2);
    expect_no_writes_beside(db);
  }
  const CliResult json = run_cli("info --json --db " + shell_quote(db) +
                                     " 2>/dev/null | python3 -c 'import json, sys; d = "
                                     "json.load(sys.stdin)[\"database\"]; print(d[\"exists\"], "
                                     "d[\"schema_version\"], \"cache migrate\" in d[\"error\"])'",
                                 dir.file("unused.db"));
  EXPECT_EQ(json.output, "True 2 True\n");

  const CliResult migrate = run_cli("cache migrate --db " + shell_quote(db), dir.file("unused.db"));
  EXPECT_EQ(migrate.status, 0) << migrate.output;
  EXPECT_TRUE(
      contains(migrate.output, fmt::format("schema version 2 -> {}", cache::kSchemaVersion)))
      << migrate.output;
  const CliResult ls = run_cli("cache ls --db " + shell_quote(db), dir.file("unused.db"));
  EXPECT_EQ(ls.status, 0) << ls.output;
  EXPECT_TRUE(contains(ls.output, "1 winners")) << ls.output;
  const CliResult again = run_cli("cache migrate --db " + shell_quote(db), dir.file("unused.db"));
  EXPECT_TRUE(contains(again.output, "nothing to do")) << again.output;
}

TEST(CliReadOnly, ACurrentDatabaseKeepsItsBytesAndModificationTime) {
  ScratchDir dir;
  const std::string db = dir.file("current.db");
  write_healthy_database(db);
  const FileSnapshot before = snapshot(db);
  for (const std::string& command : read_only_commands(dir.file("out.csv"))) {
    SCOPED_TRACE(command);
    const CliResult r = run_cli(command + " --db " + shell_quote(db), dir.file("unused.db"));
    if (command.rfind("doctor", 0) != 0) EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(snapshot(db) == before) << "the file was written:\n" << r.output;
    expect_no_writes_beside(db);
    fs::remove(dir.file("out.csv"));
  }
}

TEST(CliReadOnly, MigrateNeverCreatesADatabase) {
  ScratchDir dir;
  const CliResult r =
      run_cli("cache migrate --db " + shell_quote(dir.file("none.db")), dir.file("unused.db"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "nothing to migrate")) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("none.db")));
}

}  // namespace
}  // namespace kt::testing
