// A suite killed between problems picks up where it stopped: `kerntune tune` skips each problem
// that a run with the same options finished (its run done, a winner stored), says so, and tunes
// it again with --retune. Predicting without a GPU on one explicit sm80 config, so one kernel is
// compiled in all (its cubin serves every shape: the compile key holds no problem size).
#include <gtest/gtest.h>

#include <string>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/versions.hpp"
#include "support/cli_runner.hpp"
#include "support/isolation.hpp"

namespace {

using kt::testing::run_cli;

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

std::size_t rows_of(const std::string& db_path, const std::string& problem_key) {
  const kt::cache::TuningKey key{problem_key, kt::device_profile("a100").fingerprint(),
                                 kt::kBenchmarkProtocolVersion, kt::kGemmTemplateVersion};
  return kt::cache::Database::open(db_path).measurements(key).size();
}

TEST(SuiteResume, ProblemsAFinishedRunTunedAreSkippedUntilRetune) {
  kt::testing::use_built_worker();
  kt::testing::ScratchDb db("kt_suite_resume");
  const std::string options =
      " --predict --device-profile a100 --config sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1";
  const std::string first = "gemm:bf16:bf16:nt:128x128x128";
  const std::string second = "gemm:bf16:bf16:nt:256x128x128";

  // The suite's first problem finished; the process was killed before the second began.
  const kt::testing::CliResult done = run_cli("tune --shape 128x128x128" + options, db.path());
  ASSERT_EQ(done.status, 0) << done.output;
  const std::size_t first_rows = rows_of(db.path(), first);
  ASSERT_EQ(first_rows, 1u) << done.output;

  const kt::testing::CliResult resumed =
      run_cli("tune --shape 128x128x128 --shape 256x128x128" + options, db.path());
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, first + ": skipped, finished before")) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "--retune")) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "skipped 1 of 2 problems")) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, second + ": 1 candidates")) << resumed.output;
  // The progress lines of the second shape say where the run stands.
  EXPECT_TRUE(contains(resumed.output, "[shape 2/2 | compile 1/1")) << resumed.output;
  EXPECT_EQ(rows_of(db.path(), first), first_rows) << "the finished problem was tuned again";
  EXPECT_EQ(rows_of(db.path(), second), 1u);

  // Other options are another tuning: not skipped.
  const kt::testing::CliResult other = run_cli(
      "tune --shape 128x128x128 --predict --device-profile a100 --config "
      "sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1 --config sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
      db.path());
  ASSERT_EQ(other.status, 0) << other.output;
  EXPECT_FALSE(contains(other.output, "skipped")) << other.output;

  const kt::testing::CliResult again =
      run_cli("tune --shape 128x128x128 --shape 256x128x128 --retune" + options, db.path());
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_FALSE(contains(again.output, "skipped")) << again.output;
  EXPECT_EQ(rows_of(db.path(), first), first_rows + 2 + 1);  // the other run's two, then one
  EXPECT_EQ(rows_of(db.path(), second), 2u);
}

}  // namespace
