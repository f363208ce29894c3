// `kerntune doctor` as a user runs it (no CUDA driver): a good database passes, a stale one gets
// WARN lines saying what is stale and what to do, every kind of damaged one a FAIL line and exit
// status 1; the file is never changed or created.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>

#include "cache/database.hpp"
#include "support/cli_runner.hpp"
#include "support/damaged_database.hpp"

namespace kt::testing {
namespace {

namespace fs = std::filesystem;

class DoctorTest : public ::testing::Test {
 protected:
  DoctorTest() {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           fmt::format("kt_doctor_{}_{}_{}", ::getpid(), counter++, std::random_device{}());
    fs::create_directories(dir_);
  }
  ~DoctorTest() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  CliResult doctor(const std::string& db) {
    return run_cli("doctor --db " + shell_quote(db), file("unused.db"));
  }

  fs::path dir_;
};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The lines of the database section: from its title to the next section's.
std::string database_section(const std::string& output) {
  const std::size_t start = output.find("database ");
  const std::size_t end = output.find("\ntoolkit", start);
  return start == std::string::npos ? "" : output.substr(start, end - start);
}

// The exit status doctor must have given the database section's verdicts: 1 also when the
// toolkit or driver sections failed on this machine (NVRTC missing).
int expected_status(const std::string& output, bool database_fails) {
  const bool elsewhere = contains(output.substr(output.find("\ntoolkit")), "[FAIL]");
  return database_fails || elsewhere ? 1 : 0;
}

TEST_F(DoctorTest, GoodDatabasePassesAndIsLeftUnchanged) {
  const std::string db = file("good.db");
  write_healthy_database(db);
  const std::string before = read_file_bytes(db);
  const CliResult r = doctor(db);
  const std::string section = database_section(r.output);
  EXPECT_TRUE(contains(section, "[OK]   PRAGMA integrity_check: ok")) << r.output;
  EXPECT_TRUE(contains(section, fmt::format("[OK]   schema version {}", cache::kSchemaVersion)))
      << r.output;
  EXPECT_TRUE(contains(section, "20 cubins")) << r.output;
  EXPECT_TRUE(contains(section, "200 measurements, 1 winners")) << r.output;
  EXPECT_TRUE(contains(section, "[OK]   every winner and measurement is of the current"))
      << r.output;
  EXPECT_FALSE(contains(section, "[FAIL]")) << r.output;
  EXPECT_TRUE(contains(r.output, "\ntoolkit\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "\ndriver\n  [WARN] no usable GPU")) << r.output;
  EXPECT_EQ(r.status, expected_status(r.output, false)) << r.output;
  EXPECT_EQ(read_file_bytes(db), before);
}

TEST_F(DoctorTest, StaleRowsAreWarnedWithTheFix) {
  const std::string db = file("stale.db");
  write_healthy_database(db);
  {
    cache::Database database = cache::Database::open(db);
    cache::Winner old;
    old.key = {"attn:bf16:b1.hq8.hkv8.sq128.sk128.d64.full", "NVIDIA A100/cc80/108sm", 1, 0};
    old.config_key = "fa2.bm128.bn64.w8.s2";
    old.median_us = 3;
    old.run_id = "old";
    database.set_winner(old);
    old.key.problem_key = "gemm:bf16:bf16:nt:64x64x64";
    old.key.protocol_version = 0;
    old.key.template_version = 1;
    database.set_winner(old);
  }
  const CliResult r = doctor(db);
  const std::string section = database_section(r.output);
  EXPECT_TRUE(contains(section, "[WARN] 2 winners and 0 measurements are of an older benchmark "
                                "protocol or template version"))
      << r.output;
  EXPECT_TRUE(contains(section, "fix: re-tune those shapes (`kerntune tune --db")) << r.output;
  EXPECT_FALSE(contains(section, "[FAIL]")) << r.output;
  EXPECT_EQ(r.status, expected_status(r.output, false)) << r.output;
}

TEST_F(DoctorTest, MissingDatabaseIsAWarningAndIsNotCreated) {
  const std::string db = file("absent.db");
  const CliResult r = doctor(db);
  EXPECT_TRUE(contains(database_section(r.output), "[WARN] no database file here yet")) << r.output;
  EXPECT_EQ(r.status, expected_status(r.output, false)) << r.output;
  EXPECT_FALSE(fs::exists(db));
}

TEST_F(DoctorTest, HelpTeachesWhatIsCheckedAndTheExitStatus) {
  const CliResult r = run_cli("doctor --help", file("unused.db"));
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* needle : {"read-only", "integrity", "stale", "NVRTC", "libcuda", "OK, WARN",
                             "Exit status", "--db"})
    EXPECT_TRUE(contains(r.output, needle)) << "no '" << needle << "' in:\n" << r.output;
}

class DoctorOnDamage : public DoctorTest, public ::testing::WithParamInterface<DamageCase> {};

TEST_P(DoctorOnDamage, FailsNamingTheProblemAndLeavesTheFileAlone) {
  const std::string db = make_damaged_database(GetParam().damage, file("kerntune.db"));
  const std::string before = fs::is_regular_file(db) ? read_file_bytes(db) : "";
  const CliResult r = doctor(db);
  const std::string section = database_section(r.output);
  EXPECT_TRUE(contains(section, "[FAIL]")) << r.output;
  EXPECT_TRUE(contains(section, "fix: ")) << r.output;
  EXPECT_EQ(r.status, 1) << r.output;
  if (fs::is_regular_file(db)) {
    EXPECT_EQ(read_file_bytes(db), before);
  }
}

std::vector<DamageCase> damage_that_doctor_fails() {
  std::vector<DamageCase> cases;
  for (const DamageCase& c : refused_damage_cases())
    if (c.damage != Damage::kUnreadable) cases.push_back(c);  // absent to doctor: a WARN
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryDamage, DoctorOnDamage,
                         ::testing::ValuesIn(damage_that_doctor_fails()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kt::testing
