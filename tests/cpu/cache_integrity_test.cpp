// Every kind of bad database file, opened through the Database API and through the CLI: a
// kt::Error (never a crash) that names the file, the problem and a command to run, and the file
// left exactly as it was.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"
#include "support/cli_runner.hpp"
#include "support/damaged_database.hpp"
#include "support/scratch_dir.hpp"

namespace kt::testing {
namespace {

namespace fs = std::filesystem;

using kt::testing::ScratchDir;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The bytes of a file, or of nothing for a directory or a path that does not exist.
std::string snapshot(const std::string& path) {
  return fs::is_regular_file(path) ? read_file_bytes(path) : std::string();
}

class DamagedDatabase : public ::testing::TestWithParam<DamageCase> {};

TEST_P(DamagedDatabase, OpenIsAClearErrorNamingThePathTheProblemAndACommand) {
  ScratchDir dir;
  const std::string path = make_damaged_database(GetParam().damage, dir.file("kerntune.db"));
  const std::string before = snapshot(path);
  try {
    cache::Database::open(path);
    FAIL() << "opened a damaged file";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_TRUE(error.kind() == ErrorKind::kDatabase) << message;
    EXPECT_TRUE(contains(message, path)) << message;
    for (const std::string& needle : GetParam().needles)
      EXPECT_TRUE(contains(message, needle)) << "no '" << needle << "' in: " << message;
  }
  EXPECT_EQ(snapshot(path), before);
}

TEST_P(DamagedDatabase, ReadOnlyOpenAndMergeAreClearErrorsNamingThePath) {
  ScratchDir dir;
  const std::string path = make_damaged_database(GetParam().damage, dir.file("kerntune.db"));
  const std::string before = snapshot(path);
  try {
    cache::Database::open_readonly(path);
    ADD_FAILURE() << "opened a damaged file read-only";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), path)) << error.what();
  }
  cache::Database target = cache::Database::open(dir.file("target.db"));
  try {
    target.merge_from(path);
    ADD_FAILURE() << "merged a damaged file";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), path)) << error.what();
  }
  EXPECT_EQ(target.summary().num_measurements, 0);
  EXPECT_EQ(snapshot(path), before);
}

TEST_P(DamagedDatabase, CliPrintsOneErrorLineWithTheFixAndExitsNonZero) {
  ScratchDir dir;
  const std::string path = make_damaged_database(GetParam().damage, dir.file("kerntune.db"));
  const std::string before = snapshot(path);
  const CliResult r = run_cli("cache ls --db " + shell_quote(path), dir.file("unused.db"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "kerntune: database error: ")) << r.output;
  EXPECT_TRUE(contains(r.output, path)) << r.output;
  for (const std::string& needle : GetParam().needles)
    EXPECT_TRUE(contains(r.output, needle)) << "no '" << needle << "' in: " << r.output;
  EXPECT_EQ(snapshot(path), before);
}

INSTANTIATE_TEST_SUITE_P(EveryDamage, DamagedDatabase, ::testing::ValuesIn(refused_damage_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DamagedDatabaseEmpty, EmptyFileBecomesADatabaseReadWriteAndIsRefusedReadOnly) {
  ScratchDir dir;
  const std::string path = make_damaged_database(Damage::kEmpty, dir.file("empty.db"));
  try {
    cache::Database::open_readonly(path);
    ADD_FAILURE() << "opened an empty file read-only";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "it is empty")) << error.what();
    EXPECT_TRUE(contains(error.what(), "kerntune doctor --db")) << error.what();
  }
  // `cache ls` only reads: it refuses the file and leaves it empty; `cache migrate` writes.
  const CliResult ls = run_cli("cache ls --db " + shell_quote(path), dir.file("unused.db"));
  EXPECT_EQ(ls.status, 1) << ls.output;
  EXPECT_TRUE(contains(ls.output, "it is empty")) << ls.output;
  EXPECT_EQ(fs::file_size(path), 0u);
  const CliResult migrate =
      run_cli("cache migrate --db " + shell_quote(path), dir.file("unused.db"));
  EXPECT_EQ(migrate.status, 0) << migrate.output;
  EXPECT_TRUE(contains(migrate.output, "an empty file, now a kerntune database")) << migrate.output;
  const CliResult after = run_cli("cache ls --db " + shell_quote(path), dir.file("unused.db"));
  EXPECT_EQ(after.status, 0) << after.output;
  EXPECT_TRUE(contains(after.output, "0 winners")) << after.output;
}

TEST(DamagedDatabaseLater, CorruptPagesMetByAQueryNameTheDoctor) {
  // Corruption that a query meets (rather than the check on opening) says what to run, too.
  ScratchDir dir;
  const std::string path = make_damaged_database(Damage::kRandomPages, dir.file("late.db"));
  cache::sql::Connection raw = cache::sql::Connection::open(path, cache::sql::OpenMode::kReadOnly);
  try {
    raw.exec("SELECT count(*), sum(length(detail)) FROM measurements");
    FAIL() << "read corrupt pages without an error";
  } catch (const cache::sql::SqliteError& error) {
    EXPECT_TRUE(error.is_not_a_database()) << error.what();
    EXPECT_TRUE(contains(error.what(), "kerntune doctor --db '" + path + "'")) << error.what();
  }
}

}  // namespace
}  // namespace kt::testing
