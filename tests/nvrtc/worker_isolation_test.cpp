// Crash isolation without a GPU: candidates compile in kerntune-worker processes; a compile
// worker that dies (the compile_crash test fault raises SIGSEGV in it) makes its candidate
// compile_crash and is restarted for the next candidate. A compile crash is the host's outcome
// (the blocklist is for faults on the device): later runs try the kernel again, and ignore the
// host-side entries older builds blocklisted. The tuner itself never dies.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "support/gemm_builders.hpp"
#include "support/isolation.hpp"
#include "tuner/candidate_compiler.hpp"
#include "tuner/problem_tuner.hpp"

namespace kt::tune {
namespace {

using kt::testing::config;
using kt::testing::problem;

const GemmConfig kGood = config(64, 64, 64, 32, 32, 4);
const GemmConfig kOther = config(128, 128, 32, 64, 64, 4);
const GemmConfig kBroken = config(64, 128, 32, 32, 64, 4);

class WorkerIsolation : public ::testing::Test {
 protected:
  void SetUp() override { kt::testing::use_built_worker(); }
};

TEST_F(WorkerIsolation, CompileWorkerCompilesAndTheCubinIsStoredOnce) {
  cache::Database db = cache::Database::open(":memory:");
  CandidateCompiler compiler(db, CompileSettings{"profile", 600, false, {}});
  const GemmProblem p = problem(256, 256, 256);
  const CompileOutcome first =
      compiler.compile(to_key(kGood), gen::generate_gemm(p, kGood, "sm_90a"));
  ASSERT_EQ(first.status, cache::Status::kOk) << first.detail;
  ASSERT_TRUE(first.record.has_value());
  EXPECT_FALSE(first.from_cache);
  EXPECT_FALSE(first.record->cubin.empty());
  EXPECT_GT(first.record->registers, 0);
  const CompileOutcome second =
      compiler.compile(to_key(kGood), gen::generate_gemm(p, kGood, "sm_90a"));
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.compile_key, first.compile_key);
  EXPECT_EQ(compiler.num_worker_restarts(), 0);
}

TEST_F(WorkerIsolation, CrashedCompileWorkerIsRecordedAndReplacedForTheNextCandidate) {
  cache::Database db = cache::Database::open(":memory:");
  CandidateCompiler compiler(
      db, CompileSettings{"profile", 600, false, {{to_key(kBroken), TestFault::kCompileCrash}}});
  const GemmProblem p = problem(256, 256, 256);
  const CompileOutcome crashed =
      compiler.compile(to_key(kBroken), gen::generate_gemm(p, kBroken, "sm_90a"));
  EXPECT_EQ(crashed.status, cache::Status::kCompileCrash);
  EXPECT_TRUE(crashed.worker_died);
  EXPECT_NE(crashed.detail.find("signal 11"), std::string::npos) << crashed.detail;
  // The faulty source has its own compile key: it never aliases the good kernel.
  EXPECT_NE(crashed.compile_key, gen::compile_key(gen::generate_gemm(p, kBroken, "sm_90a")));
  const CompileOutcome next =
      compiler.compile(to_key(kGood), gen::generate_gemm(p, kGood, "sm_90a"));
  EXPECT_EQ(next.status, cache::Status::kOk) << next.detail;
  EXPECT_EQ(compiler.num_worker_restarts(), 1);
}

TEST_F(WorkerIsolation, MissingWorkerExecutableSaysWhereToPointIt) {
  setenv("KERNTUNE_WORKER", "/nonexistent/kerntune-worker", 1);
  cache::Database db = cache::Database::open(":memory:");
  CandidateCompiler compiler(db, CompileSettings{"profile", 600, false, {}});
  try {
    compiler.compile(to_key(kOther), gen::generate_gemm(problem(256, 256, 256), kOther, "sm_90a"));
    ADD_FAILURE() << "expected kt::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("KERNTUNE_WORKER"), std::string::npos) << e.what();
  }
  kt::testing::use_built_worker();
}

TEST_F(WorkerIsolation, PredictRunSurvivesACompileCrashWhichBlocklistsNothing) {
  kt::testing::ScratchDb file("kt_isolation_predict");
  cache::Database db = cache::Database::open(file.path());
  const GemmProblem p = problem(256, 256, 256);
  TuneOptions o;
  o.predict_only = true;
  o.device = device_profile("h200");
  o.configs = {to_key(kGood), to_key(kOther), to_key(kBroken)};
  o.isolation.test_faults = {{to_key(kBroken), TestFault::kCompileCrash}};
  auto status_of = [](const TuneReport& r, const GemmConfig& c) {
    for (const auto& cand : r.candidates)
      if (cand.config_key == to_key(c)) return cand;
    return Candidate{};
  };

  const TuneReport first = tune_problem(to_key(p), db, o);
  EXPECT_EQ(status_of(first, kBroken).status, cache::Status::kCompileCrash);
  EXPECT_EQ(status_of(first, kGood).status, cache::Status::kOk);
  ASSERT_TRUE(first.winner.has_value());
  EXPECT_NE(first.candidates[*first.winner].config_key, to_key(kBroken));
  EXPECT_EQ(first.num_worker_restarts, 1);
  EXPECT_TRUE(db.blocklist().empty());
  kt::testing::expect_consistent(file.path(), {to_key(p)}, 3);

  // The next run compiles it again (and it crashes again): nothing kept it out.
  const TuneReport second = tune_problem(to_key(p), db, o);
  EXPECT_EQ(status_of(second, kBroken).status, cache::Status::kCompileCrash);
  EXPECT_EQ(second.num_worker_restarts, 1);
  EXPECT_TRUE(db.blocklist().empty());
  kt::testing::expect_consistent(file.path(), {to_key(p)}, 3);
}

TEST_F(WorkerIsolation, HostSideEntriesOfOlderBuildsAreIgnoredAndDeviceFaultsKept) {
  cache::Database db = cache::Database::open(":memory:");
  const GemmProblem p = problem(256, 256, 256);
  const std::string good = gen::compile_key(gen::generate_gemm(p, kGood, "sm_90a"));
  const std::string other = gen::compile_key(gen::generate_gemm(p, kOther, "sm_90a"));
  cache::BlocklistEntry host;
  host.device_fingerprint = "profile";
  host.compile_key = good;
  host.reason = cache::Status::kTimeout;
  host.detail = "compile worker no reply within 600.0 s; worker killed (killed by signal 9)";
  db.add_to_blocklist(host);
  cache::BlocklistEntry device = host;
  device.compile_key = other;
  device.reason = cache::Status::kIllegalAddress;
  device.detail = "an illegal memory access was encountered";
  db.add_to_blocklist(device);

  CandidateCompiler compiler(db, CompileSettings{"profile", 600, false, {}});
  const CompileOutcome compiled =
      compiler.compile(to_key(kGood), gen::generate_gemm(p, kGood, "sm_90a"));
  EXPECT_EQ(compiled.status, cache::Status::kOk) << compiled.detail;
  const CompileOutcome kept_out =
      compiler.compile(to_key(kOther), gen::generate_gemm(p, kOther, "sm_90a"));
  EXPECT_EQ(kept_out.status, cache::Status::kRejected);
  EXPECT_EQ(kept_out.detail.rfind("blocklisted: illegal_address", 0), 0u) << kept_out.detail;
}

}  // namespace
}  // namespace kt::tune
