// Tests of the tuning database's files: garbage, truncated, foreign and newer files are refused
// with a kt::Error naming the path and leave the file as it was; merging copies, is idempotent
// and lets measured winners beat predicted ones; the default path follows the environment.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"
#include "support/file_bytes.hpp"
#include "support/scratch_dir.hpp"
#include "support/tiny_cubin.hpp"

namespace kt::cache {
namespace {

namespace fs = std::filesystem;

using kt::testing::ScratchDir;

using kt::testing::read_file_bytes;
using kt::testing::write_file_bytes;

std::string random_bytes(std::size_t size) {
  std::mt19937 random(12345);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  return bytes;
}

TuningKey key_of(const std::string& shape) {
  return TuningKey{.problem_key = "gemm:bf16:bf16:nt:" + shape,
                   .device_fingerprint = "NVIDIA H200/cc90/132sm",
                   .protocol_version = 1,
                   .template_version = 1};
}

// A valid GEMM config key standing for `name` (distinct names, distinct keys): merge stores only
// rows whose keys parse.
std::string config_named(const std::string& name) {
  // FNV-1a, so that forked processes agree on every name's key.
  std::uint32_t hash = 2166136261u;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return fmt::format("sm80.bm128.bn128.bk32.wm64.wn64.s4.g{}.sk{}", 1 + hash % 4096,
                     1 + hash / 4096 % 4096);
}

Measurement measurement(const std::string& shape, const std::string& config, double median_us) {
  Measurement m;
  m.key = key_of(shape);
  m.config_key = config_named(config);
  m.status = Status::kOk;
  m.median_us = median_us;
  m.num_reps = 20;
  m.detail = "d";
  m.run_id = "r1";
  m.created_unix = 1700000000;
  return m;
}

Winner winner(const std::string& shape, const std::string& config, double median_us,
              bool predicted) {
  Winner w;
  w.key = key_of(shape);
  w.config_key = config_named(config);
  w.median_us = median_us;
  w.predicted = predicted;
  w.run_id = "r1";
  w.created_unix = 1700000000;
  return w;
}

// A record that merge accepts: a compile key of 64 hex digits, a cubin-shaped ELF of about
// `bytes` bytes holding its kernel.
CubinRecord cubin(const std::string& name, std::size_t bytes = 400) {
  return kt::testing::tiny_cubin_record(kt::testing::hex_key(name), {"_Z1kILi1EEvv"},
                                        bytes > 400 ? bytes - 400 : 0);
}

// Runs `action`, expects a kt::Error of `kind` whose message contains every one of `needles`.
template <typename Action>
void expect_error(Action action, ErrorKind kind, const std::vector<std::string>& needles) {
  try {
    action();
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), kind) << error.what();
    for (const std::string& needle : needles) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
          << "'" << needle << "' not in: " << error.what();
    }
  }
}

// ---- refused files -----------------------------------------------------------------------------

TEST(CacheFiles, GarbageFileIsRefusedNamingThePathAndLeftUntouched) {
  ScratchDir dir;
  const std::string path = dir.file("garbage.db");
  const std::string bytes = random_bytes(8192);
  write_file_bytes(path, bytes);
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase,
               {path, "not a SQLite database", "--db"});
  expect_error([&] { Database::open_readonly(path); }, ErrorKind::kDatabase, {path});
  EXPECT_EQ(read_file_bytes(path), bytes);
}

TEST(CacheFiles, ShortGarbageFileIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("short.db");
  write_file_bytes(path, "hello, I am not a database\n");
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase, {path});
  EXPECT_EQ(read_file_bytes(path), "hello, I am not a database\n");
}

TEST(CacheFiles, DatabaseTruncatedToHalfIsRefusedNamingThePath) {
  ScratchDir dir;
  const std::string path = dir.file("truncated.db");
  {
    Database db = Database::open(path);
    for (int i = 0; i < 100; ++i) db.put_cubin(cubin(fmt::format("key-{}", i), 5000));
    std::vector<Measurement> rows;
    for (int i = 0; i < 500; ++i) rows.push_back(measurement("64x64x64", fmt::format("c{}", i), i));
    db.add_measurements(rows);
  }
  ASSERT_FALSE(fs::exists(path + "-wal"));  // checkpointed on close: the file holds everything
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 400'000u);
  fs::resize_file(path, size / 2);
  const std::string bytes = read_file_bytes(path);
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase,
               {path, "corrupt", "kerntune doctor --db"});
  expect_error([&] { Database::open_readonly(path); }, ErrorKind::kDatabase, {path});
  EXPECT_EQ(read_file_bytes(path), bytes);
}

TEST(CacheFiles, SqliteFileOfAnotherApplicationIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("other-app.db");
  {
    sql::Connection raw = sql::Connection::open(path, sql::OpenMode::kReadWriteCreate);
    raw.exec(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); "
        "INSERT INTO users (name) VALUES ('ada')");
  }
  const std::string bytes = read_file_bytes(path);
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase,
               {path, "another application", "users", "--db"});
  EXPECT_EQ(read_file_bytes(path), bytes);
}

TEST(CacheFiles, SqliteFileWithAnotherApplicationIdIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("other-id.db");
  {
    sql::Connection raw = sql::Connection::open(path, sql::OpenMode::kReadWriteCreate);
    raw.exec("PRAGMA application_id = 42");
  }
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase,
               {path, "another application", "0x2a"});
}

TEST(CacheFiles, NewerSchemaIsRefusedSayingSoAndLeftUntouched) {
  ScratchDir dir;
  const std::string path = dir.file("newer.db");
  { Database::open(path).set_winner(winner("1x1x1", "a", 1, false)); }
  {
    sql::Connection raw = sql::Connection::open(path, sql::OpenMode::kReadWriteCreate);
    raw.exec(fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'",
                         kSchemaVersion + 1));
  }
  const std::string bytes = read_file_bytes(path);
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase,
               {path, "newer", fmt::format("schema version {}", kSchemaVersion + 1)});
  expect_error([&] { Database::open_readonly(path); }, ErrorKind::kDatabase, {path, "newer"});
  EXPECT_EQ(read_file_bytes(path), bytes);
}

TEST(CacheFiles, KerntuneIdWithoutMetaTableIsRefusedAsDamaged) {
  ScratchDir dir;
  const std::string path = dir.file("damaged.db");
  { Database::open(path); }
  {
    sql::Connection raw = sql::Connection::open(path, sql::OpenMode::kReadWriteCreate);
    raw.exec("DROP TABLE meta");
  }
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase, {path, "damaged"});
}

TEST(CacheFiles, EmptyFileBecomesADatabase) {
  ScratchDir dir;
  const std::string path = dir.file("empty.db");
  write_file_bytes(path, "");
  Database db = Database::open(path);
  EXPECT_EQ(db.summary().schema_version, kSchemaVersion);
}

TEST(CacheFiles, EmptyFileIsRefusedReadOnly) {
  ScratchDir dir;
  const std::string path = dir.file("empty.db");
  write_file_bytes(path, "");
  expect_error([&] { Database::open_readonly(path); }, ErrorKind::kDatabase, {path, "empty"});
}

TEST(CacheFiles, DirectoryInPlaceOfTheFileIsAClearError) {
  ScratchDir dir;
  const std::string path = dir.file("a-directory.db");
  fs::create_directories(path);
  expect_error([&] { Database::open(path); }, ErrorKind::kDatabase, {path, "--db"});
}

TEST(CacheFiles, PathWithUriCharactersOpens) {
  ScratchDir dir;
  const std::string path = dir.file("odd name?mode=ro#x%41.db");
  { Database::open(path).set_winner(winner("1x1x1", "a", 1, false)); }
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(Database::open_readonly(path).summary().num_winners, 1);
  Database other = Database::open(dir.file("other.db"));
  EXPECT_EQ(other.merge_from(path), 1);
}

TEST(CacheFiles, TwoProcessesCreatingAndWritingOneFileLoseNothing) {
  ScratchDir dir;
  const std::string path = dir.file("shared-by-processes.db");
  constexpr int kRowsEach = 60;
  const auto write_rows = [&path](const std::string& who) {
    Database db = Database::open(path);
    for (int i = 0; i < kRowsEach; ++i) {
      db.add_measurements({measurement("1x1x1", fmt::format("{}-{}", who, i), i)});
      db.put_cubin(cubin(fmt::format("{}-{}", who, i)));
    }
  };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    try {
      write_rows("child");
    } catch (...) {
      code = 1;
    }
    ::_exit(code);
  }
  write_rows("parent");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const Summary summary = Database::open(path).summary();
  EXPECT_EQ(summary.num_measurements, 2 * kRowsEach);
  EXPECT_EQ(summary.num_cubins, 2 * kRowsEach);
}

// ---- merge
// ---------------------------------------------------------------------------------------

TEST(CacheMerge, MergeCopiesEveryKindOfRow) {
  ScratchDir dir;
  const std::string source = dir.file("source.db");
  {
    Database db = Database::open(source);
    db.put_cubin(cubin("k1"));
    db.put_cubin(cubin("k2"));
    db.add_measurements({measurement("1x1x1", "a", 5), measurement("1x1x1", "b", 6)});
    db.set_winner(winner("1x1x1", "a", 5, false));
  }
  Database db = Database::open(dir.file("target.db"));
  EXPECT_EQ(db.merge_from(source), 5);
  const Summary summary = db.summary();
  EXPECT_EQ(summary.num_cubins, 2);
  EXPECT_EQ(summary.num_measurements, 2);
  EXPECT_EQ(summary.num_winners, 1);
  EXPECT_EQ(db.find_cubin(kt::testing::hex_key("k1"))->cubin, cubin("k1").cubin);
  EXPECT_EQ(db.find_winner(key_of("1x1x1"))->config_key, config_named("a"));
}

TEST(CacheMerge, MergeTwiceAddsNothing) {
  ScratchDir dir;
  const std::string source = dir.file("source.db");
  {
    Database db = Database::open(source);
    db.put_cubin(cubin("k1"));
    db.add_measurements({measurement("1x1x1", "a", 5), measurement("2x2x2", "a", 6)});
    db.set_winner(winner("1x1x1", "a", 5, false));
    db.set_winner(winner("2x2x2", "a", 6, true));
  }
  Database db = Database::open(dir.file("target.db"));
  EXPECT_EQ(db.merge_from(source), 5);
  EXPECT_EQ(db.merge_from(source), 0);
  const Summary summary = db.summary();
  EXPECT_EQ(summary.num_cubins, 1);
  EXPECT_EQ(summary.num_measurements, 2);
  EXPECT_EQ(summary.num_winners, 2);
}

TEST(CacheMerge, MeasuredWinnerBeatsPredictedInBothDirections) {
  ScratchDir dir;
  const std::string measured = dir.file("measured.db");
  const std::string predicted = dir.file("predicted.db");
  Database::open(measured).set_winner(winner("1x1x1", "m", 50, false));
  Database::open(predicted).set_winner(winner("1x1x1", "p", 1, true));

  Database a = Database::open(dir.file("a.db"));
  a.merge_from(predicted);
  EXPECT_EQ(a.merge_from(measured), 1);
  EXPECT_EQ(a.find_winner(key_of("1x1x1"))->config_key, config_named("m"));

  Database b = Database::open(dir.file("b.db"));
  b.merge_from(measured);
  EXPECT_EQ(b.merge_from(predicted), 0);
  EXPECT_EQ(b.find_winner(key_of("1x1x1"))->config_key, config_named("m"));
}

TEST(CacheMerge, FasterMeasuredWinnerWinsAndSlowerLoses) {
  ScratchDir dir;
  const std::string fast = dir.file("fast.db");
  const std::string slow = dir.file("slow.db");
  Database::open(fast).set_winner(winner("1x1x1", "fast", 9, false));
  Database::open(slow).set_winner(winner("1x1x1", "slow", 11, false));
  Database db = Database::open(dir.file("target.db"));
  db.set_winner(winner("1x1x1", "mid", 10, false));
  EXPECT_EQ(db.merge_from(slow), 0);
  EXPECT_EQ(db.find_winner(key_of("1x1x1"))->config_key, config_named("mid"));
  EXPECT_EQ(db.merge_from(fast), 1);
  EXPECT_EQ(db.find_winner(key_of("1x1x1"))->config_key, config_named("fast"));
}

TEST(CacheMerge, CubinOfAKnownKeyIsKept) {
  ScratchDir dir;
  const std::string source = dir.file("source.db");
  CubinRecord theirs = cubin("k");
  theirs.registers = 99;
  Database::open(source).put_cubin(theirs);
  Database db = Database::open(":memory:");
  db.put_cubin(cubin("k"));
  EXPECT_EQ(db.merge_from(source), 0);
  EXPECT_EQ(db.find_cubin(kt::testing::hex_key("k"))->registers, 0);
}

TEST(CacheMerge, BadSourcesAreClearErrorsAndLeaveTheDatabaseUntouched) {
  ScratchDir dir;
  const std::string garbage = dir.file("garbage.db");
  write_file_bytes(garbage, random_bytes(4096));
  const std::string foreign = dir.file("foreign.db");
  sql::Connection::open(foreign, sql::OpenMode::kReadWriteCreate).exec("CREATE TABLE t (x)");
  const std::string newer = dir.file("newer.db");
  Database::open(newer).set_winner(winner("9x9x9", "n", 1, false));
  sql::Connection::open(newer, sql::OpenMode::kReadWriteCreate)
      .exec("UPDATE meta SET value = '999' WHERE key = 'schema_version'");

  Database db = Database::open(dir.file("target.db"));
  db.set_winner(winner("1x1x1", "a", 5, false));
  expect_error([&] { db.merge_from(garbage); }, ErrorKind::kDatabase, {garbage});
  expect_error([&] { db.merge_from(foreign); }, ErrorKind::kDatabase, {foreign, "another"});
  expect_error([&] { db.merge_from(newer); }, ErrorKind::kDatabase, {newer, "newer"});
  expect_error([&] { db.merge_from(dir.file("absent.db")); }, ErrorKind::kNotFound, {"absent.db"});
  EXPECT_FALSE(fs::exists(dir.file("absent.db")));
  const Summary summary = db.summary();
  EXPECT_EQ(summary.num_winners, 1);
  EXPECT_EQ(summary.num_measurements, 0);
  // The database still works after the failed merges (nothing left attached or open).
  db.set_winner(winner("2x2x2", "b", 5, false));
  EXPECT_EQ(db.summary().num_winners, 2);
}

TEST(CacheMerge, MergingAFileIntoItselfAddsNothing) {
  ScratchDir dir;
  const std::string path = dir.file("self.db");
  Database db = Database::open(path);
  db.add_measurements({measurement("1x1x1", "a", 5)});
  EXPECT_EQ(db.merge_from(path), 0);
  EXPECT_EQ(db.summary().num_measurements, 1);
}

TEST(CacheMerge, InMemoryDatabaseMergesAFile) {
  ScratchDir dir;
  const std::string source = dir.file("source.db");
  Database::open(source).add_measurements({measurement("1x1x1", "a", 5)});
  Database db = Database::open(":memory:");
  EXPECT_EQ(db.merge_from(source), 1);
  EXPECT_EQ(db.all_measurements().at(0).config_key, config_named("a"));
}

// ---- default path ------------------------------------------------------------------------------

// Sets or unsets an environment variable for one scope, restoring it afterwards.
class EnvOverride {
 public:
  EnvOverride(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  EnvOverride(const EnvOverride&) = delete;
  EnvOverride& operator=(const EnvOverride&) = delete;
  ~EnvOverride() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CacheDefaultPath, KerntuneDbWins) {
  EnvOverride db("KERNTUNE_DB", "/data/tuning.db");
  EnvOverride xdg("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(default_database_path(), "/data/tuning.db");
}

TEST(CacheDefaultPath, XdgCacheHomeComesNext) {
  EnvOverride db("KERNTUNE_DB", nullptr);
  EnvOverride xdg("XDG_CACHE_HOME", "/xdg/cache");
  EnvOverride home("HOME", "/home/me");
  EXPECT_EQ(default_database_path(), "/xdg/cache/kerntune/kerntune.db");
}

TEST(CacheDefaultPath, HomeCacheIsTheFallback) {
  EnvOverride db("KERNTUNE_DB", "");
  EnvOverride xdg("XDG_CACHE_HOME", nullptr);
  EnvOverride home("HOME", "/home/me");
  EXPECT_EQ(default_database_path(), "/home/me/.cache/kerntune/kerntune.db");
}

TEST(CacheDefaultPath, RelativeXdgCacheHomeIsIgnored) {
  EnvOverride db("KERNTUNE_DB", nullptr);
  EnvOverride xdg("XDG_CACHE_HOME", "relative/cache");
  EnvOverride home("HOME", "/home/me");
  EXPECT_EQ(default_database_path(), "/home/me/.cache/kerntune/kerntune.db");
}

TEST(CacheDefaultPath, NoVariablesAtAllAsksForDb) {
  EnvOverride db("KERNTUNE_DB", nullptr);
  EnvOverride xdg("XDG_CACHE_HOME", nullptr);
  EnvOverride home("HOME", nullptr);
  expect_error([] { default_database_path(); }, ErrorKind::kNotFound, {"--db"});
}

TEST(CacheDefaultPath, DefaultPathCanBeOpenedWithItsDirectories) {
  ScratchDir dir;
  EnvOverride db("KERNTUNE_DB", nullptr);
  EnvOverride xdg("XDG_CACHE_HOME", dir.file("xdg").c_str());
  const std::string path = default_database_path();
  EXPECT_EQ(path, dir.file("xdg") + "/kerntune/kerntune.db");
  Database::open(path);
  EXPECT_TRUE(fs::exists(path));
}

}  // namespace
}  // namespace kt::cache
