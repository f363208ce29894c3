// The fleet commands end to end, predicting (no GPU): a manifest of GEMM, attention and RMSNorm
// problems on two targets tuned in one process and in three shards (one of them by two workers,
// one SIGKILLed and resumed); the merged bundle's winners equal the one-process run's exactly,
// merging again changes nothing and leaves the inputs as they were, status sees every item done,
// verify finds every winner's cubin of every variant by source key, and diff finds no change.
// A recorded manifest is tuned the same way, after which dispatch serves each problem from its
// own entry.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cache/database.hpp"
#include "core/manifest.hpp"
#include "core/op_registry.hpp"
#include "fleet/provenance.hpp"
#include "runtime/op_dispatch.hpp"
#include "runtime/problem_recorder.hpp"
#include "support/cli_runner.hpp"
#include "support/isolation.hpp"
#include "support/scratch_dir.hpp"

namespace kt {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

constexpr const char* kManifest = R"(kerntune-manifest 1
# a small fleet: two targets, three ops
tune candidates=2
device h200
device a100
gemm 4096x4096x4096
gemm 16x4096x4096
gemm 1000x1536x512 layout=nn
attention b=2,h=8,s=1024,d=64 causal
attention b=1,hq=16,hkv=4,sq=1,sk=4096,d=128
rmsnorm rows=4096,hidden=4096
rmsnorm rows=1000,hidden=1000 residual
)";

using WinnerRow = std::tuple<std::string, std::string, std::string, std::string, bool>;

// Every winner as (device, problem, config, time, predicted), the time in shortest round trip.
std::vector<WinnerRow> winners(const std::string& path) {
  std::vector<WinnerRow> rows;
  for (const cache::Winner& w : cache::Database::open_readonly(path).all_winners())
    rows.emplace_back(w.key.device_fingerprint, w.key.problem_key, w.config_key,
                      fmt::format("{}", w.median_us), w.predicted);
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<std::string> env() {
  return {"KERNTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1", "KERNTUNE_LOG_LEVEL=warn"};
}

int fleet(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> full = {"fleet"};
  full.insert(full.end(), args.begin(), args.end());
  return kt::testing::wait_exit_status(kt::testing::start_cli(full, env(), log));
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class Fleet : public ::testing::Test {
 protected:
  void SetUp() override {
    kt::testing::use_built_worker();
    manifest_ = dir_.file("fleet.manifest");
    std::ofstream(manifest_) << kManifest;
    log_ = dir_.file("fleet.log");
  }
  void TearDown() override {
    if (HasFailure()) std::printf("%s\n", read_text(log_).c_str());
  }

  ScratchDir dir_;
  std::string manifest_;
  std::string log_;
};

TEST_F(Fleet, ShardsMergedEqualOneProcessRunAndTheBundleVerifies) {
  const std::string single = dir_.file("single.db"), out = dir_.file("shards");
  ASSERT_EQ(fleet({"run", "--manifest", manifest_, "--shard", "1/1", "--db", single}, log_), 0);
  const std::vector<WinnerRow> expected = winners(single);
  ASSERT_EQ(expected.size(), 14u);  // 7 problems on 2 devices

  // Shard 1 by two workers; shard 2 killed once it has a winner, then run again to the end.
  ASSERT_EQ(
      fleet({"run", "--manifest", manifest_, "--shard", "1/3", "--out", out, "--devices", "0,0"},
            log_),
      0);
  const std::string shard2 = out + "/shard-2-of-3.db";
  const pid_t pid = kt::testing::start_cli(
      {"fleet", "run", "--manifest", manifest_, "--shard", "2/3", "--out", out}, env(), log_);
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::error_code error;
    if (!fs::exists(shard2, error)) continue;
    try {
      if (!cache::Database::open_readonly(shard2).all_winners().empty()) break;
    } catch (const Error&) {
    }
  }
  ::kill(pid, SIGKILL);
  kt::testing::wait_exit_status(pid);
  const std::size_t after_kill = winners(shard2).size();
  EXPECT_GE(after_kill, 1u);
  ASSERT_EQ(fleet({"run", "--manifest", manifest_, "--shard", "2/3", "--out", out}, log_), 0);
  ASSERT_EQ(fleet({"run", "--manifest", manifest_, "--shard", "3/3", "--out", out}, log_), 0);
  EXPECT_NE(read_text(log_).find("done before"), std::string::npos)
      << "the rerun of shard 2 did not skip what the killed run finished";

  const std::string status_json = dir_.file("status.json");
  const kt::testing::CliResult status = kt::testing::run_shell(
      "KERNTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1 " +
      kt::testing::shell_quote(kt::testing::cli_executable()) + " fleet status --manifest " +
      kt::testing::shell_quote(manifest_) + " --shards 3 --dir " + kt::testing::shell_quote(out) +
      " --json --require-complete > " + kt::testing::shell_quote(status_json));
  EXPECT_EQ(status.status, 0) << status.output;
  EXPECT_NE(read_text(status_json).find("\"done\": 14"), std::string::npos)
      << read_text(status_json);

  // The merged bundle holds exactly the one-process run's winners.
  const std::string bundle = dir_.file("bundle.db");
  const std::vector<std::string> merge = {"merge", "--manifest", manifest_, "--shards", "3",
                                          "--dir", out,          "--out",   bundle};
  ASSERT_EQ(fleet(merge, log_), 0);
  EXPECT_EQ(winners(bundle), expected);
  EXPECT_FALSE(fs::exists(bundle + "-wal"));
  const fleet::Provenance p = fleet::read_provenance(cache::Database::open_readonly(bundle));
  EXPECT_EQ(p.role, "bundle");
  EXPECT_EQ(p.num_predicted, 14);
  EXPECT_EQ(p.num_measured, 0);
  EXPECT_EQ(p.manifests, std::vector<std::string>{manifest_sha256(read_manifest(manifest_))});
  EXPECT_EQ(p.devices.size(), 2u);
  EXPECT_FALSE(p.nvrtc_versions.empty());
  EXPECT_EQ(p.content_sha256, cache::Database::open_readonly(bundle).content_sha256());

  // Merging again changes nothing, and the inputs are as they were.
  const std::string shard1_hash =
      cache::Database::open_readonly(out + "/shard-1-of-3.db").content_sha256();
  ASSERT_EQ(fleet(merge, log_), 0);
  EXPECT_EQ(fleet::read_provenance(cache::Database::open_readonly(bundle)).content_sha256,
            p.content_sha256);
  EXPECT_NE(read_text(log_).find("(unchanged)"), std::string::npos);
  EXPECT_EQ(cache::Database::open_readonly(out + "/shard-1-of-3.db").content_sha256(), shard1_hash);

  // verify: every winner's cubin of every variant, found by source key.
  const kt::testing::CliResult verify = kt::testing::run_shell(kt::testing::cli_command(
      "fleet verify " + kt::testing::shell_quote(bundle), dir_.file("unused.db")));
  EXPECT_EQ(verify.status, 0) << verify.output;
  EXPECT_NE(verify.output.find(": OK: 14 winners"), std::string::npos) << verify.output;
  // diff against the one-process run: the same winners.
  const kt::testing::CliResult diff = kt::testing::run_shell(
      kt::testing::cli_command("fleet diff --exit-code " + kt::testing::shell_quote(single) + " " +
                                   kt::testing::shell_quote(bundle),
                               dir_.file("unused.db")));
  EXPECT_EQ(diff.status, 0) << diff.output;
  EXPECT_NE(diff.output.find("14 same, 0 differ"), std::string::npos) << diff.output;
}

TEST_F(Fleet, ARecordedManifestIsTunedAndThenServedFromItsOwnEntries) {
  const std::string recorded = dir_.file("recorded.manifest");
  rt::ProblemRecorder recorder(recorded);
  const std::vector<std::string> problems = {"gemm:bf16:bf16:nt:3000x4096x4096",
                                             "attn:bf16:b1.hq8.hkv8.sq2048.sk2048.d128.causal"};
  for (const std::string& p : problems) recorder.record(p, device_profile("h200"));
  std::ofstream(recorded, std::ios::app) << "tune candidates=2\n";  // as an operator would add
  const std::string db = dir_.file("recorded.db");
  ASSERT_EQ(fleet({"run", "--manifest", recorded, "--db", db}, log_), 0);
  const cache::Database bundle = cache::Database::open_readonly(db);
  for (const std::string& p : problems) {
    const rt::DispatchChoice c =
        rt::choose_config(&bundle, op_spec_for_key(p), p, device_profile("h200"), 64 << 20);
    EXPECT_EQ(c.grade, rt::DispatchGrade::kPredicted) << p;  // measured ("exact") on a GPU
    EXPECT_EQ(c.tuned_problem_key, p);
  }
}

}  // namespace
}  // namespace kt
