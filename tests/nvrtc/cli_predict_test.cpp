// `kerntune tune` on a machine without a GPU: it says so first, predicts with a device profile
// (compiling the candidates with NVRTC), succeeds, and stores a winner marked as predicted.
// The binary runs as a subprocess with a fresh database and a bogus CUDA driver path.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/versions.hpp"
#include "support/cli_runner.hpp"

namespace {

using Result = kt::testing::CliResult;
using kt::testing::run_cli;

}  // namespace

TEST(CliPredict, TuneWithoutAGpuPredictsAndStoresAPredictedWinner) {
  const std::string binary = KT_BINARY_DIR "/src/tools/kerntune";
  ASSERT_TRUE(std::filesystem::exists(binary)) << "build the kerntune target first";
  const std::filesystem::path db = std::filesystem::temp_directory_path() /
                                   ("kt_cli_predict_test_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(db);

  const Result tune = run_cli("tune --shape 64x64x64 --candidates 2", db.string());
  EXPECT_EQ(tune.status, 0) << tune.output;
  const std::string first_line = tune.output.substr(0, tune.output.find('\n'));
  EXPECT_NE(first_line.find("No GPU found"), std::string::npos) << tune.output;

  const Result ls = run_cli("cache ls", db.string());
  EXPECT_EQ(ls.status, 0) << ls.output;
  // The row of the tuned problem: device, problem, winner config, time, source.
  const std::string problem_key = "gemm:bf16:bf16:nt:64x64x64";
  std::istringstream lines(ls.output);
  std::string line;
  bool found = false;
  while (std::getline(lines, line)) {
    if (line.find(problem_key) == std::string::npos) continue;
    found = true;
    EXPECT_NE(line.find("predicted"), std::string::npos) << line;
    std::istringstream fields(line.substr(line.find(problem_key) + problem_key.size()));
    std::string config_key;
    fields >> config_key;
    // The stored winner is a config that can run the problem on the predicted-for profile.
    const kt::GemmConfig c = kt::parse_gemm_config_key(config_key);
    const auto why = kt::validate(kt::parse_gemm_key(problem_key), c, kt::device_profile("h200"));
    EXPECT_FALSE(why.has_value()) << config_key << ": " << why.value_or("");
  }
  EXPECT_TRUE(found) << "no winner for " << problem_key << " in:\n" << ls.output;

  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(db.string() + suffix, ignored);
}

// `--candidates N` caps the candidates over every round of the op's search: GEMM's local rounds
// after the first add none past the cap (they once made `--candidates 3` compile 46).
TEST(CliPredict, CandidatesCapsEveryRoundOfTheSearch) {
  const std::filesystem::path db = std::filesystem::temp_directory_path() /
                                   ("kt_cli_predict_cap_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(db);
  const Result tune =
      run_cli("tune --shape 64x64x64 --candidates 3 --device-profile a100", db.string());
  EXPECT_EQ(tune.status, 0) << tune.output;
  EXPECT_NE(tune.output.find("gemm:bf16:bf16:nt:64x64x64: 3 candidates ("), std::string::npos)
      << tune.output;
  const kt::cache::TuningKey key{"gemm:bf16:bf16:nt:64x64x64",
                                 kt::device_profile("a100").fingerprint(),
                                 kt::kBenchmarkProtocolVersion, kt::kGemmTemplateVersion};
  EXPECT_EQ(kt::cache::Database::open(db.string()).measurements(key).size(), 3u);
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(db.string() + suffix, ignored);
}

// tune --json: stdout is one document (the text and the "No GPU" notice are left out, progress
// stays on stderr): the predicted run and its winner; run again, the problem is skipped.
TEST(CliPredict, TuneJsonIsOneDocumentAndASecondRunSkips) {
  const std::filesystem::path db = std::filesystem::temp_directory_path() /
                                   ("kt_cli_predict_json_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(db);
  const std::string fields =
      " 2>/dev/null | python3 -c 'import json, sys; d = json.load(sys.stdin); p = "
      "d[\"problems\"][0]; print(d[\"predicted\"], d[\"device_profile\"], "
      "d[\"no_gpu_reason\"] is not None, len(d[\"problems\"]), p[\"problem\"], p[\"skipped\"], "
      "p[\"winner\"][\"predicted\"], p[\"winner\"][\"config\"] == "
      "p.get(\"runner_up\", {}).get(\"config\"), p.get(\"candidates\"))'";
  const Result first = run_cli(
      "tune --json --shape 64x64x64 --candidates 2 --device-profile a100" + fields, db.string());
  EXPECT_EQ(first.output, "True a100 True 1 gemm:bf16:bf16:nt:64x64x64 False True False 2\n");
  const Result again = run_cli(
      "tune --json --shape 64x64x64 --candidates 2 --device-profile a100" + fields, db.string());
  EXPECT_EQ(again.output, "True a100 True 1 gemm:bf16:bf16:nt:64x64x64 True True False None\n");
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(db.string() + suffix, ignored);
}

// tune --search wide: one round of the model's first --candidates configs (every valid one
// without the flag), a run of its own beside the default search's (a finished wide run does not
// skip a default one), and no --config beside it.
TEST(CliPredict, WideSearchIsOneRoundOfTheModelsTopAndARunOfItsOwn) {
  const std::filesystem::path db = std::filesystem::temp_directory_path() /
                                   ("kt_cli_predict_wide_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(db);
  const std::string fields =
      " 2>/dev/null | python3 -c 'import json, sys; p = json.load(sys.stdin)[\"problems\"][0]; "
      "print(p[\"skipped\"], p.get(\"candidates\"), p[\"timing\"][\"measured\"], "
      "p[\"timing\"][\"compile_s\"] > 0)'";
  const std::string skipped =
      " 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)[\"problems\"][0]"
      "[\"skipped\"])'";
  const std::string tune = "tune --json --shape 64x64x64 --device-profile a100 --candidates 5";
  EXPECT_EQ(run_cli(tune + " --search wide" + fields, db.string()).output, "False 5 0 True\n");
  // The same options again: skipped. The default search: tuned, its own run.
  EXPECT_EQ(run_cli(tune + " --search wide" + skipped, db.string()).output, "True\n");
  EXPECT_EQ(run_cli(tune + skipped, db.string()).output, "False\n");
  const Result both = run_cli(
      "tune --search wide --config sm80.bm64.bn64.bk32.wm32.wn32.s3.g1.sk1 --shape "
      "64x64x64",
      db.string());
  EXPECT_EQ(both.status, 2) << both.output;
  const Result bad = run_cli("tune --search widest --shape 64x64x64", db.string());
  EXPECT_EQ(bad.status, 2) << bad.output;
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(db.string() + suffix, ignored);
}
