// Resumable runs: `kerntune tune --predict` over several shapes is SIGKILLed at random moments
// (24 times; every third time with the cubins deleted first, so that the kill may land while
// compile workers run); after each kill the same command runs to the end, and the database
// must then be complete and consistent: every run done, each of its candidates recorded exactly
// once, one winner per problem. The killed runs' workers must not outlive them.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/isolation.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Pids of live kerntune-worker processes started by one of `parents`.
std::vector<int> workers_of(const std::set<pid_t>& parents) {
  std::vector<int> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find("kerntune-worker") == std::string::npos) continue;
    const std::size_t at = cmdline.find(std::string("--parent") + '\0');
    if (at == std::string::npos) continue;
    const pid_t parent = pid_t(std::atoi(cmdline.c_str() + at + 9));
    if (parents.count(parent)) found.push_back(std::atoi(entry.path().filename().c_str()));
  }
  return found;
}

int count_lines_with(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace

TEST(ResumeAfterKill, PredictRunKilledAtRandomMomentsAlwaysResumesToAConsistentDatabase) {
  constexpr int kKills = 24;
  kt::testing::use_built_worker();
  ASSERT_TRUE(std::filesystem::exists(kt::testing::cli_executable()))
      << "no kerntune CLI at " << kt::testing::cli_executable();
  kt::testing::ScratchDb db("kt_kill_predict");
  const std::string log = db.path() + ".log";
  const std::vector<std::string> shapes = {"256x256x256", "512x256x128", "384x384x64",
                                           "128x512x256", "640x128x128", "256x768x64"};
  const std::vector<std::string> configs = {"sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1",
                                            "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
                                            "sm80.bm64.bn128.bk32.wm32.wn64.s4.g8.sk1"};
  // --retune: every run tunes (and a killed one resumes) even the problems an earlier run
  // finished, which a plain `tune` skips (suite_resume_test.cpp).
  std::vector<std::string> args = {"tune", "--predict", "--retune"};
  std::vector<std::string> problems;
  for (const auto& s : shapes) {
    args.insert(args.end(), {"--shape", s});
    problems.push_back("gemm:bf16:bf16:nt:" + s);
  }
  for (const auto& c : configs) args.insert(args.end(), {"--config", c});
  const std::vector<std::string> env = {"KERNTUNE_DB=" + db.path(),
                                        "KERNTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1",
                                        "KERNTUNE_LOG_LEVEL=warn"};

  // A cold run (compiling every cubin) and a warm one (all cubins cached), timed: the kills
  // land anywhere in runs of either kind.
  auto timed_run = [&] {
    const auto begin = Clock::now();
    EXPECT_EQ(kt::testing::wait_exit_status(kt::testing::start_cli(args, env, log)), 0);
    return std::chrono::duration<double>(Clock::now() - begin).count();
  };
  const double cold_s = timed_run();
  const double warm_s = timed_run();
  kt::testing::expect_consistent(db.path(), problems, configs.size());
  ASSERT_FALSE(HasFailure()) << "see " << log;

  std::mt19937 random(std::random_device{}());
  std::set<pid_t> killed;
  std::filesystem::remove(log);
  const auto start = Clock::now();
  for (int i = 0; i < kKills; ++i) {
    const bool cold = i % 3 == 0;
    if (cold) {
      kt::cache::sql::Connection raw =
          kt::cache::sql::Connection::open(db.path(), kt::cache::sql::OpenMode::kReadWriteCreate);
      raw.exec("DELETE FROM cubins");
    }
    std::uniform_real_distribution<double> moment(0, 1.2 * (cold ? cold_s : warm_s));
    const pid_t pid = kt::testing::start_cli(args, env, log);
    std::this_thread::sleep_for(std::chrono::duration<double>(moment(random)));
    kill(pid, SIGKILL);
    kt::testing::wait_exit_status(pid);
    killed.insert(pid);
    ASSERT_EQ(kt::testing::wait_exit_status(kt::testing::start_cli(args, env, log)), 0)
        << "resume " << i << " failed; see " << log;
    kt::testing::expect_consistent(db.path(), problems, configs.size());
    if (HasFailure()) FAIL() << "inconsistent after kill " << i << "; see " << log;
  }
  const double loop_s = std::chrono::duration<double>(Clock::now() - start).count();
  const int resumed = count_lines_with(log, "(resumed)");
  std::printf(
      "[ figures  ] %d kills of runs of %.2f s (cold) and %.2f s (warm); %d problem "
      "runs resumed; %.1f s in all\n",
      kKills, cold_s, warm_s, resumed, loop_s);
  EXPECT_GT(resumed, 0) << "no kill landed inside a run";
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // the workers' watchdog period
  EXPECT_TRUE(workers_of(killed).empty()) << "workers outlived their killed tuner";
  std::filesystem::remove(log);
}
