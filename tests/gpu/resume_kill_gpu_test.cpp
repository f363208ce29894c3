// Resumable runs on the GPU: `kerntune tune` (measuring, in worker processes) over two shapes is
// SIGKILLed at random moments (20 times); after each kill the same command runs to the end, and
// the database must be complete and consistent: every run done, each candidate measured once
// per run, one measured winner per problem.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_fixture.hpp"
#include "support/isolation.hpp"

namespace {

using Clock = std::chrono::steady_clock;

class ResumeAfterKillOnGpu : public kt::testing::GpuTest {};

TEST_F(ResumeAfterKillOnGpu, MeasuringRunKilledAtRandomMomentsAlwaysResumesConsistently) {
  constexpr int kKills = 20;
  kt::testing::use_built_worker();
  ASSERT_TRUE(std::filesystem::exists(kt::testing::cli_executable()))
      << "no kerntune CLI at " << kt::testing::cli_executable();
  kt::testing::ScratchDb db("kt_kill_gpu");
  const std::string log = db.path() + ".log";
  const std::vector<std::string> shapes = {"1024x1024x1024", "2048x512x1024"};
  const std::vector<std::string> configs = {"sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1",
                                            "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
                                            "sm80.bm64.bn128.bk32.wm32.wn64.s4.g8.sk1"};
  // --retune: every run measures (and a killed one resumes) even the problems an earlier run
  // finished, which a plain `tune` skips.
  std::vector<std::string> args = {"tune", "--finalists", "2", "--seed", "7", "--retune"};
  std::vector<std::string> problems;
  for (const auto& s : shapes) {
    args.insert(args.end(), {"--shape", s});
    problems.push_back("gemm:bf16:bf16:nt:" + s);
  }
  for (const auto& c : configs) args.insert(args.end(), {"--config", c});
  const std::vector<std::string> env = {"KERNTUNE_DB=" + db.path(), "KERNTUNE_LOG_LEVEL=warn"};

  ASSERT_EQ(kt::testing::wait_exit_status(kt::testing::start_cli(args, env, log)), 0);
  const auto timed = Clock::now();
  ASSERT_EQ(kt::testing::wait_exit_status(kt::testing::start_cli(args, env, log)), 0);
  const double run_s = std::chrono::duration<double>(Clock::now() - timed).count();
  kt::testing::expect_consistent(db.path(), problems, configs.size());

  std::mt19937 random(std::random_device{}());
  std::uniform_real_distribution<double> moment(0, 1.2 * run_s);
  const auto start = Clock::now();
  for (int i = 0; i < kKills; ++i) {
    const pid_t pid = kt::testing::start_cli(args, env, log);
    std::this_thread::sleep_for(std::chrono::duration<double>(moment(random)));
    kill(pid, SIGKILL);
    kt::testing::wait_exit_status(pid);
    ASSERT_EQ(kt::testing::wait_exit_status(kt::testing::start_cli(args, env, log)), 0)
        << "resume " << i << " failed; see " << log;
    kt::testing::expect_consistent(db.path(), problems, configs.size());
    if (HasFailure()) FAIL() << "inconsistent after kill " << i << "; see " << log;
  }
  std::printf("[ figures  ] %d kills of a %.2f s measuring run; %.1f s in all\n", kKills, run_s,
              std::chrono::duration<double>(Clock::now() - start).count());
  std::remove(log.c_str());
}

}  // namespace
