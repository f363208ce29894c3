// Crash isolation on the GPU, with deliberately broken template variants (the test-only
// KT_TEST_FAULT blocks of templates/common/test_fault.cuh): an out-of-bounds store, a trap, an
// endless loop (caught by a short time limit), a kernel that writes nothing, and a compile
// worker killed by SIGSEGV. The run completes, a good candidate wins, each broken one is
// recorded with its reason, the crashing ones are blocklisted and skipped by the next run.
// Attention goes through the same workers.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "cache/database.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_model.hpp"
#include "core/versions.hpp"
#include "gpu/gpu_fixture.hpp"
#include "support/gemm_builders.hpp"
#include "support/isolation.hpp"
#include "tuner/attention_tuner.hpp"
#include "tuner/gemm_tuner.hpp"

namespace kt::tune {
namespace {

class FaultInjection : public kt::testing::GpuTest {
 protected:
  void SetUp() override {
    kt::testing::GpuTest::SetUp();
    kt::testing::use_built_worker();
  }
};

// The model's best `n` distinct split-K-free configs for `p` on this device.
std::vector<GemmConfig> top_configs(const GemmProblem& p, const DeviceDesc& device, std::size_t n) {
  std::vector<GemmConfig> out;
  for (const RankedConfig& r : rank_by_model(p, enumerate_gemm_configs(p, device), device)) {
    if (r.config.split_k != 1) continue;
    out.push_back(r.config);
    if (out.size() == n) break;
  }
  return out;
}

template <class Report>
std::map<std::string, cache::Status> statuses(const Report& r) {
  std::map<std::string, cache::Status> out;
  for (const auto& c : r.candidates) out[to_key(c.config)] = c.status;
  return out;
}

template <class Report>
void print_counts(const char* what, const Report& r) {
  std::map<std::string, int> counts;
  for (const auto& c : r.candidates) ++counts[cache::to_string(c.status)];
  std::string line;
  for (const auto& [status, n] : counts) line += " " + status + "=" + std::to_string(n);
  std::printf("[ counts   ] %s:%s; worker restarts %d; compile %.1f s, measure %.1f s\n", what,
              line.c_str(), r.num_worker_restarts, r.compile_wall_s, r.measure_wall_s);
}

TEST_F(FaultInjection, BrokenGemmCandidatesAreRecordedWithTheirReasonAndAGoodOneWins) {
  kt::testing::ScratchDb file("kt_fault_injection_gemm");
  cache::Database db = cache::Database::open(file.path());
  const GemmProblem p = kt::testing::problem(1024, 1024, 1024);
  const std::vector<GemmConfig> c = top_configs(p, device_, 7);
  ASSERT_EQ(c.size(), 7u);
  TuneOptions o;
  o.device_ordinal = 0;
  o.configs = c;
  o.seed = 1234;
  o.isolation.candidate_timeout_s = 5;
  o.isolation.test_faults = {{to_key(c[1]), TestFault::kOutOfBounds},
                             {to_key(c[2]), TestFault::kTrap},
                             {to_key(c[3]), TestFault::kHang},
                             {to_key(c[4]), TestFault::kCompileCrash},
                             {to_key(c[5]), TestFault::kWrongResult}};
  const TuneReport r = tune_gemm(p, db, o);
  print_counts("gemm with faults", r);
  auto s = statuses(r);
  EXPECT_EQ(s[to_key(c[0])], cache::Status::kOk);
  EXPECT_EQ(s[to_key(c[1])], cache::Status::kIllegalAddress);
  EXPECT_EQ(s[to_key(c[2])], cache::Status::kLaunchFailure);
  EXPECT_EQ(s[to_key(c[3])], cache::Status::kTimeout);
  EXPECT_EQ(s[to_key(c[4])], cache::Status::kCompileCrash);
  EXPECT_EQ(s[to_key(c[5])], cache::Status::kWrongResult);
  EXPECT_EQ(s[to_key(c[6])], cache::Status::kOk);
  ASSERT_TRUE(r.winner.has_value());
  const std::string winner = to_key(r.candidates[*r.winner].config);
  EXPECT_TRUE(winner == to_key(c[0]) || winner == to_key(c[6])) << winner;
  EXPECT_GT(r.candidates[*r.winner].timing.median_us, 0);
  EXPECT_GE(r.num_worker_restarts, 4);  // one compile worker, three benchmark workers
  EXPECT_EQ(db.blocklist().size(), 4u);  // not the wrong result: that is a measurement
  kt::testing::expect_consistent(file.path(), {to_key(p)}, c.size());
  const auto stored = db.find_winner({to_key(p), device_.fingerprint(), kBenchmarkProtocolVersion,
                                      kGemmTemplateVersion});
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->config_key, winner);
  EXPECT_FALSE(stored->predicted);

  // The next run skips the four blocklisted kernels without starting a worker for them.
  const TuneReport again = tune_gemm(p, db, o);
  print_counts("gemm again, blocklist applied", again);
  s = statuses(again);
  for (int i : {1, 2, 3, 4}) EXPECT_EQ(s[to_key(c[i])], cache::Status::kRejected) << i;
  EXPECT_EQ(s[to_key(c[5])], cache::Status::kWrongResult);
  EXPECT_EQ(again.num_worker_restarts, 0);
  ASSERT_TRUE(again.winner.has_value());
}

TEST_F(FaultInjection, AttentionUsesTheSameWorkersAndSurvivesAnIllegalAddress) {
  kt::testing::ScratchDb file("kt_fault_injection_attention");
  cache::Database db = cache::Database::open(file.path());
  AttentionProblem p;
  p.dtype = DType::kBF16;
  p.causal = false;
  parse_attention_shape("b=1,h=4,s=512,d=64", p);
  const std::vector<AttentionConfig> space = enumerate_attention_configs(p, device_);
  ASSERT_GE(space.size(), 3u);
  AttentionTuneOptions o;
  o.configs = {space[0], space[1], space[2]};
  o.seed = 99;
  o.isolation.candidate_timeout_s = 5;
  o.isolation.test_faults = {{to_key(space[1]), TestFault::kOutOfBounds}};
  const AttentionTuneReport r = tune_attention(p, db, o);
  print_counts("attention with an oob fault", r);
  auto s = statuses(r);
  EXPECT_EQ(s[to_key(space[1])], cache::Status::kIllegalAddress);
  EXPECT_EQ(s[to_key(space[0])], cache::Status::kOk);
  EXPECT_EQ(s[to_key(space[2])], cache::Status::kOk);
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_NE(to_key(r.candidates[*r.winner].config), to_key(space[1]));
  EXPECT_EQ(r.num_worker_restarts, 1);
  EXPECT_EQ(db.blocklist().size(), 1u);
  kt::testing::expect_consistent(file.path(), {to_key(p)}, 3);
}

}  // namespace
}  // namespace kt::tune
