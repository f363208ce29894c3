// Schema version 2 of the tuning database: a version 1 file migrates in place keeping its rows;
// the blocklist adds, finds, replaces, lists and clears entries; tuning runs begin, are claimed
// by exactly one resuming process, and finish with their rows, winner and `done` in one go.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"
#include "support/old_schema.hpp"

namespace kt::cache {
namespace {

class RunStateDb : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("kt_run_state_" + std::to_string(getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                .string();
    cleanup();
  }
  void TearDown() override { cleanup(); }
  void cleanup() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_ + suffix, ignored);
  }
  std::string path_;
};

TuningKey key(const std::string& problem = "gemm:bf16:bf16:nt:64x64x64") {
  return {problem, "NVIDIA H200/cc90/132sm", 1, 1};
}

Measurement row(const std::string& config, const std::string& run_id) {
  Measurement m;
  m.key = key();
  m.config_key = config;
  m.status = Status::kOk;
  m.median_us = 10;
  m.num_reps = 20;
  m.run_id = run_id;
  return m;
}

BlocklistEntry entry(const std::string& compile_key, Status reason) {
  BlocklistEntry e;
  e.device_fingerprint = key().device_fingerprint;
  e.compile_key = compile_key;
  e.nvrtc_version = "13.0";
  e.template_version = 1;
  e.op = "gemm";
  e.config_key = "sm80.cfg." + compile_key;
  e.kernel = "kt::gemm_sm80<...>";
  e.problem_key = key().problem_key;
  e.reason = reason;
  e.detail = "benchmark worker killed by signal 9";
  e.run_id = "run-1";
  return e;
}

TEST(CacheStatus, CrashStatusesRoundTripAndAreTheBlocklistReasons) {
  for (Status s :
       {Status::kCompileCrash, Status::kTimeout, Status::kIllegalAddress, Status::kLaunchFailure}) {
    EXPECT_EQ(parse_status(to_string(s)), s);
    EXPECT_TRUE(is_crash(s)) << to_string(s);
  }
  EXPECT_STREQ(to_string(Status::kIllegalAddress), "illegal_address");
  for (Status s : {Status::kOk, Status::kPredicted, Status::kRejected, Status::kCompileError,
                   Status::kLaunchError, Status::kWrongResult})
    EXPECT_FALSE(is_crash(s)) << to_string(s);
}

TEST(CacheStatus, OnlyFaultsOnTheDeviceAreDeviceFaults) {
  EXPECT_TRUE(is_device_fault(entry("a", Status::kIllegalAddress)));
  EXPECT_TRUE(is_device_fault(entry("b", Status::kLaunchFailure)));
  EXPECT_TRUE(is_device_fault(entry("c", Status::kTimeout)));  // the benchmark worker's
  BlocklistEntry compile_timeout = entry("d", Status::kTimeout);
  compile_timeout.detail = "compile worker no reply within 600.0 s; worker killed";
  EXPECT_FALSE(is_device_fault(compile_timeout));
  BlocklistEntry compile_crash = entry("e", Status::kCompileCrash);
  compile_crash.detail = "compile worker exited with status 0";
  EXPECT_FALSE(is_device_fault(compile_crash));
}

TEST_F(RunStateDb, VersionOneFileMigratesKeepingItsRows) {
  {
    Database db = Database::open(path_);
    db.add_measurements({row("a", "old-run")});
  }
  kt::testing::downgrade_schema(path_, 1);              // exactly a version 1 file
  EXPECT_THROW(Database::open_readonly(path_), Error);  // older: only read-write migrates
  Database db = Database::open(path_);
  EXPECT_EQ(kSchemaVersion, 4);
  EXPECT_EQ(db.summary().schema_version, 4);
  ASSERT_EQ(db.all_measurements().size(), 1u);
  EXPECT_EQ(db.all_measurements()[0].run_id, "old-run");
  db.add_to_blocklist(entry("k1", Status::kTimeout));
  EXPECT_EQ(db.blocklist().size(), 1u);
  EXPECT_FALSE(db.find_run("old-run").has_value());
}

TEST_F(RunStateDb, BlocklistFindsReplacesListsAndClears) {
  Database db = Database::open(path_);
  EXPECT_FALSE(db.find_blocklisted(key().device_fingerprint, "k1").has_value());
  db.add_to_blocklist(entry("k1", Status::kIllegalAddress));
  db.add_to_blocklist(entry("k2", Status::kCompileCrash));
  db.add_to_blocklist(entry("k1", Status::kLaunchFailure));  // same key: replaced
  const auto found = db.find_blocklisted(key().device_fingerprint, "k1");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->reason, Status::kLaunchFailure);
  EXPECT_EQ(found->config_key, "sm80.cfg.k1");
  EXPECT_GT(found->created_unix, 0);
  EXPECT_FALSE(db.find_blocklisted("another GPU/cc80/108sm", "k1").has_value());
  EXPECT_EQ(db.blocklist().size(), 2u);
  EXPECT_EQ(db.clear_blocklist(), 2);
  EXPECT_TRUE(db.blocklist().empty());
}

TEST_F(RunStateDb, RunsBeginAreClaimedOnceAndFinishAtomically) {
  Database db = Database::open(path_);
  TuningRun run;
  run.run_id = "r1";
  run.key = key();
  run.options_sha256 = "opts";
  run.pid = 111;
  run.host = "h";
  db.begin_run(run);
  EXPECT_THROW(db.begin_run(run), Error);
  EXPECT_TRUE(db.unfinished_runs(key(), "other-opts").empty());
  ASSERT_EQ(db.unfinished_runs(key(), "opts").size(), 1u);
  // Two resuming processes race for the dead run: exactly one wins.
  EXPECT_TRUE(db.claim_run("r1", 111, "h", 222, "h"));
  EXPECT_FALSE(db.claim_run("r1", 111, "h", 333, "h"));
  EXPECT_EQ(db.find_run("r1")->pid, 222);

  db.add_measurements({row("a", "r1")});
  Winner w;
  w.key = key();
  w.config_key = "a";
  w.median_us = 9;
  w.run_id = "r1";
  Measurement finalist = row("a", "r1");
  finalist.median_us = 9;
  finalist.detail = "finalist";
  db.finish_run("r1", {finalist}, w);
  const auto done = db.find_run("r1");
  ASSERT_TRUE(done.has_value());
  EXPECT_TRUE(done->done);
  EXPECT_GT(done->finished_unix, 0);
  EXPECT_TRUE(db.unfinished_runs(key(), "opts").empty());
  ASSERT_TRUE(db.last_finished_run(key(), "opts").has_value());
  EXPECT_EQ(db.last_finished_run(key(), "opts")->run_id, "r1");
  EXPECT_FALSE(db.last_finished_run(key(), "other-opts").has_value());
  EXPECT_FALSE(db.claim_run("r1", 222, "h", 444, "h"));  // a finished run is never taken over
  EXPECT_EQ(db.all_measurements().size(), 2u);
  ASSERT_TRUE(db.find_winner(key()).has_value());
  EXPECT_EQ(db.find_winner(key())->median_us, 9);
}

}  // namespace
}  // namespace kt::cache
