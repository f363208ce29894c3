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
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "generator/nvrtc_library.hpp"
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

// The lines of a section: from its title to the next section's.
std::string section_between(const std::string& output, const std::string& title,
                            const std::string& next) {
  const std::size_t start = output.find(title);
  const std::size_t end = output.find("\n" + next, start);
  return start == std::string::npos ? "" : output.substr(start, end - start);
}
std::string database_section(const std::string& output) {
  return section_between(output, "database ", "blocklist");
}
std::string blocklist_section(const std::string& output) {
  return section_between(output, "\nblocklist", "toolkit");
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
  EXPECT_TRUE(contains(blocklist_section(r.output), "[OK]   no blocklisted kernels")) << r.output;
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
    // Every registered op's template version counts, RMSNorm's too: one old, one current.
    const int rmsnorm_version = op_spec("rmsnorm").template_version();
    old.key = {"rmsnorm:bf16:r64.h4096", "NVIDIA A100/cc80/108sm", kBenchmarkProtocolVersion,
               rmsnorm_version - 1};
    old.config_key = "rms.t256.r1.v4.reg";
    database.set_winner(old);
    old.key.problem_key = "rmsnorm:bf16:r128.h4096";
    old.key.template_version = rmsnorm_version;
    database.set_winner(old);
  }
  const CliResult r = doctor(db);
  const std::string section = database_section(r.output);
  EXPECT_TRUE(contains(section,
                       "[WARN] 3 winners and 0 measurements are of an older benchmark "
                       "protocol or template version"))
      << r.output;
  EXPECT_TRUE(contains(section, fmt::format("rmsnorm {}", op_spec("rmsnorm").template_version())))
      << r.output;
  EXPECT_TRUE(contains(section, "fix: re-tune those shapes (`kerntune tune --db")) << r.output;
  EXPECT_FALSE(contains(section, "[FAIL]")) << r.output;
  EXPECT_EQ(r.status, expected_status(r.output, false)) << r.output;
}

// Run here without a GPU, so every entry of the current NVRTC and template versions counts as
// this machine's; the others can never match again and are stale.
TEST_F(DoctorTest, BlocklistIsCountedAndStaleEntriesAreWarnedWithTheCommandThatClears) {
  const std::string db = file("blocklist.db");
  write_healthy_database(db);
  std::string nvrtc;  // the version doctor loads; empty where NVRTC is missing (not compared)
  try {
    nvrtc = gen::nvrtc().version_string;
  } catch (const Error&) {
  }
  {
    cache::Database database = cache::Database::open(db);
    cache::BlocklistEntry e;
    e.device_fingerprint = "NVIDIA H200/cc90/132sm";
    e.op = "gemm";
    e.template_version = kGemmTemplateVersion;
    e.nvrtc_version = nvrtc.empty() ? "13.0" : nvrtc;
    e.reason = cache::Status::kIllegalAddress;
    for (const char* key : {"current-1", "current-2"}) {
      e.compile_key = key;
      database.add_to_blocklist(e);
    }
    e.compile_key = "old-nvrtc";
    e.nvrtc_version = "11.0";  // no toolkit kerntune loads
    database.add_to_blocklist(e);
    e.compile_key = "old-template";
    e.nvrtc_version = nvrtc.empty() ? "13.0" : nvrtc;
    e.op = "attention";
    e.template_version = kAttentionTemplateVersion - 1;
    database.add_to_blocklist(e);
    e.compile_key = "host-side";  // what older builds blocklisted for a compile worker's death
    e.op = "gemm";
    e.template_version = kGemmTemplateVersion;
    e.reason = cache::Status::kCompileCrash;
    e.detail = "compile worker exited with status 0";
    database.add_to_blocklist(e);
  }
  const std::string before = read_file_bytes(db);
  const CliResult r = doctor(db);
  const std::string section = blocklist_section(r.output);
  const int stale = nvrtc.empty() ? 1 : 2;
  EXPECT_TRUE(contains(section, fmt::format("[OK]   {} kernels blocklisted for any device (no GPU "
                                            "here to tell)",
                                            4 - stale)))
      << r.output;
  EXPECT_TRUE(contains(section, fmt::format("[WARN] {} entries are stale", stale))) << r.output;
  EXPECT_TRUE(contains(section, "[WARN] 1 entries record failures of the host")) << r.output;
  if (!nvrtc.empty()) {
    EXPECT_TRUE(contains(section, "NVRTC 11.0 gemm template")) << r.output;
  }
  EXPECT_TRUE(
      contains(section, fmt::format("attention template {}", kAttentionTemplateVersion - 1)))
      << r.output;
  EXPECT_TRUE(contains(section, "fix: nothing breaks")) << r.output;
  EXPECT_TRUE(contains(section, "`kerntune cache blocklist --clear --db " + shell_quote(db) + "`"))
      << r.output;
  EXPECT_FALSE(contains(section, "[FAIL]")) << r.output;
  EXPECT_EQ(r.status, expected_status(r.output, false)) << r.output;
  EXPECT_EQ(read_file_bytes(db), before);
}

TEST_F(DoctorTest, MissingDatabaseIsAWarningAndIsNotCreated) {
  const std::string db = file("absent.db");
  const CliResult r = doctor(db);
  EXPECT_TRUE(contains(database_section(r.output), "[WARN] no database file here yet")) << r.output;
  EXPECT_EQ(r.status, expected_status(r.output, false)) << r.output;
  EXPECT_FALSE(fs::exists(db));
}

// --json: the same checklist as one object on stdout (python3's json parses it), the same exit
// status: 1 with a FAIL line.
TEST_F(DoctorTest, JsonIsTheChecklistAsOneObjectWithTheSameExitStatus) {
  const std::string good = file("good.db");
  write_healthy_database(good);
  const std::string damaged = make_damaged_database(Damage::kTruncated, file("truncated.db"));
  const std::string out = file("doctor.json");
  for (const std::string& db : {good, damaged}) {
    const CliResult text = doctor(db);
    const CliResult json =
        run_cli("doctor --json --db " + shell_quote(db) + " 2>/dev/null >" + shell_quote(out),
                file("unused.db"));
    EXPECT_EQ(json.status, text.status) << text.output;
    int text_fails = 0;
    for (std::size_t at = 0; (at = text.output.find("[FAIL]", at)) != std::string::npos; ++at)
      ++text_fails;
    const CliResult parsed = run_shell(
        "python3 -c 'import json, sys; d = json.load(sys.stdin); "
        "s = {x[\"name\"]: x for x in d[\"sections\"]}; "
        "print(d[\"database\"], list(s), s[\"database\"][\"lines\"][0][\"verdict\"], "
        "d[\"failures\"] == sum(l[\"verdict\"] == \"FAIL\" for x in d[\"sections\"] "
        "for l in x[\"lines\"]) == " +
        std::to_string(text_fails) + ")' <" + shell_quote(out));
    EXPECT_EQ(parsed.output, db + " ['database', 'blocklist', 'toolkit', 'driver'] " +
                                 (db == good ? "OK" : "FAIL") + " True\n");
  }
}

TEST_F(DoctorTest, HelpTeachesWhatIsCheckedAndTheExitStatus) {
  const CliResult r = run_cli("doctor --help", file("unused.db"));
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* needle :
       {"read-only", "integrity", "stale", "NVRTC", "libcuda", "OK, WARN", "Exit status", "--db"})
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
  EXPECT_TRUE(contains(r.output, "\nblocklist (not read: see the database section)\n")) << r.output;
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
