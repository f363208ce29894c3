// What fails on the host never blocklists a kernel: a worker that cannot start
// (KERNTUNE_WORKER=/bin/true) is an error naming it, a compile time-out is that run's outcome
// only, and a missing NVRTC is an error; in --predict as in measuring runs. A later run with a
// working host finds its winner, never "no candidate succeeded". Only faults of a kernel on the
// device (the gpu tier's fault_injection_test) blocklist.
#include <gtest/gtest.h>

#include <string>

#include "cache/database.hpp"
#include "support/cli_runner.hpp"
#include "support/isolation.hpp"

namespace {

using kt::testing::run_cli;

const std::string kTune =
    "tune --shape 128x128x128 --predict --device-profile a100 --config "
    "sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1 --config sm80.bm64.bn128.bk32.wm32.wn64.s4.g8.sk1";

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

std::size_t blocklisted(const std::string& db_path) {
  return kt::cache::Database::open(db_path).blocklist().size();
}

// The host repaired, the same command tunes and stores a winner.
void expect_a_later_run_succeeds(const std::string& db_path) {
  const kt::testing::CliResult later = run_cli(kTune, db_path);
  EXPECT_EQ(later.status, 0) << later.output;
  EXPECT_FALSE(contains(later.output, "no candidate succeeded")) << later.output;
  EXPECT_FALSE(contains(later.output, "blocklisted")) << later.output;
  EXPECT_TRUE(contains(later.output, "winner")) << later.output;
}

class HostSideFailures : public ::testing::Test {
 protected:
  void SetUp() override { kt::testing::use_built_worker(); }
};

TEST_F(HostSideFailures, AWorkerThatCannotStartIsAnErrorNamingItAndBlocklistsNothing) {
  kt::testing::ScratchDb db("kt_host_worker");
  const kt::testing::CliResult r = run_cli(kTune, db.path(), "KERNTUNE_WORKER=/bin/true");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "/bin/true")) << r.output;
  EXPECT_TRUE(contains(r.output, "KERNTUNE_WORKER")) << r.output;
  EXPECT_EQ(blocklisted(db.path()), 0u);
  expect_a_later_run_succeeds(db.path());
}

TEST_F(HostSideFailures, ACompileTimeoutIsThatRunsOutcomeOnlyAndBlocklistsNothing) {
  kt::testing::ScratchDb db("kt_host_timeout");
  const kt::testing::CliResult r = run_cli(kTune + " --compile-timeout 0.001", db.path());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "timeout")) << r.output;
  EXPECT_EQ(blocklisted(db.path()), 0u);
  expect_a_later_run_succeeds(db.path());
}

TEST_F(HostSideFailures, AMissingNvrtcIsAnErrorNamingItAndBlocklistsNothing) {
  kt::testing::ScratchDb db("kt_host_nvrtc");
  // A library that is not NVRTC: found first, and refused for it.
  const kt::testing::CliResult r = run_cli(kTune, db.path(), "KERNTUNE_NVRTC=libc.so.6");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "NVRTC")) << r.output;
  EXPECT_EQ(blocklisted(db.path()), 0u);
  expect_a_later_run_succeeds(db.path());
}

}  // namespace
