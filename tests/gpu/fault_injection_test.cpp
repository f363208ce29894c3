// Crash isolation on the GPU, with deliberately broken template variants (the test-only
// KT_TEST_FAULT blocks of templates/common/test_fault.cuh): an out-of-bounds store, a trap, an
// endless loop (caught by a short time limit), a kernel that writes nothing, and a compile
// worker killed by SIGSEGV. The run completes, a good candidate wins, each broken one is
// recorded with its reason, the ones that crashed on the device are blocklisted and skipped by
// the next run (the compile crash, a fault of the host, is not).
// Attention goes through the same workers.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/attention_config.hpp"
#include "core/gemm_config.hpp"
#include "core/versions.hpp"
#include "gpu/gpu_fixture.hpp"
#include "support/gemm_builders.hpp"
#include "support/isolation.hpp"
#include "tuner/problem_tuner.hpp"

namespace kt::tune {
namespace {

class FaultInjection : public kt::testing::GpuTest {
 protected:
  void SetUp() override {
    kt::testing::GpuTest::SetUp();
    kt::testing::use_built_worker();
  }
};

// Seven configs for `p` chosen by hand, not by the model (whose ranking, and so which family
// comes first, changes with the model): five sm80 tiles to break, one more sm80 tile and, where
// the device takes it, the sm90 flagship as the good ones. Faults go on sm80 keys only, so the
// test does not depend on which families call kt::test_fault yet. Each config compiles without
// spills for sm_90a (checked with `kerntune compile`), so none is rejected before it runs.
std::vector<GemmConfig> chosen_configs(const GemmProblem& p, const DeviceDesc& device) {
  using kt::testing::config;
  const GemmConfig sm90 = kt::testing::sm90_config(128, 256, 4, 2);
  return {config(128, 128, 32, 64, 64, 4),
          config(64, 64, 64, 32, 32, 3),
          config(128, 64, 32, 64, 32, 4),
          config(64, 128, 32, 32, 64, 4),
          config(64, 64, 32, 32, 32, 4),
          config(128, 256, 32, 64, 64, 3),
          validate(p, sm90, device) ? config(256, 128, 32, 64, 64, 3) : sm90};
}

std::map<std::string, cache::Status> statuses(const TuneReport& r) {
  std::map<std::string, cache::Status> out;
  for (const auto& c : r.candidates) out[c.config_key] = c.status;
  return out;
}

void print_counts(const char* what, const TuneReport& r) {
  std::map<std::string, int> counts;
  for (const auto& c : r.candidates) ++counts[cache::to_string(c.status)];
  std::string line;
  for (const auto& [status, n] : counts) line += " " + status + "=" + std::to_string(n);
  std::printf("[ counts   ] %s:%s; worker restarts %d; compile %.1f s, measure %.1f s\n", what,
              line.c_str(), r.num_worker_restarts, r.pipeline.compile_busy_s,
              r.pipeline.measure_busy_s);
}

TEST_F(FaultInjection, BrokenGemmCandidatesAreRecordedWithTheirReasonAndAGoodOneWins) {
  kt::testing::ScratchDb file("kt_fault_injection_gemm");
  cache::Database db = cache::Database::open(file.path());
  const GemmProblem p = kt::testing::problem(1024, 1024, 1024);
  const std::vector<GemmConfig> c = chosen_configs(p, device_);
  for (const GemmConfig& config : c) ASSERT_FALSE(validate(p, config, device_)) << to_key(config);
  TuneOptions o;
  o.device_ordinal = 0;
  for (const GemmConfig& config : c) o.configs.push_back(to_key(config));
  o.seed = 1234;
  o.isolation.candidate_timeout_s = 5;
  o.isolation.test_faults = {{to_key(c[1]), TestFault::kOutOfBounds},
                             {to_key(c[2]), TestFault::kTrap},
                             {to_key(c[3]), TestFault::kHang},
                             {to_key(c[4]), TestFault::kCompileCrash},
                             {to_key(c[5]), TestFault::kWrongResult}};
  const TuneReport r = tune_problem(to_key(p), db, o);
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
  const std::string winner = r.candidates[*r.winner].config_key;
  EXPECT_TRUE(winner == to_key(c[0]) || winner == to_key(c[6])) << winner;
  EXPECT_GT(r.candidates[*r.winner].timing.median_us, 0);
  EXPECT_GE(r.num_worker_restarts, 4);  // one compile worker, three benchmark workers
  // The three faults on the device; not the compile crash (the host's) nor the wrong result
  // (a measurement).
  EXPECT_EQ(db.blocklist().size(), 3u);
  kt::testing::expect_consistent(file.path(), {to_key(p)}, c.size());
  const auto stored = db.find_winner(
      {to_key(p), device_.fingerprint(), kBenchmarkProtocolVersion, kGemmTemplateVersion});
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->config_key, winner);
  EXPECT_FALSE(stored->predicted);

  // The next run skips the three blocklisted kernels without starting a worker for them; the
  // compile crash is tried (and lost) again.
  const TuneReport again = tune_problem(to_key(p), db, o);
  print_counts("gemm again, blocklist applied", again);
  s = statuses(again);
  for (int i : {1, 2, 3}) EXPECT_EQ(s[to_key(c[i])], cache::Status::kRejected) << i;
  EXPECT_EQ(s[to_key(c[4])], cache::Status::kCompileCrash);
  EXPECT_EQ(s[to_key(c[5])], cache::Status::kWrongResult);
  EXPECT_EQ(again.num_worker_restarts, 1);
  ASSERT_TRUE(again.winner.has_value());
}

TEST_F(FaultInjection, AttentionUsesTheSameWorkersAndSurvivesAnIllegalAddress) {
  kt::testing::ScratchDb file("kt_fault_injection_attention");
  cache::Database db = cache::Database::open(file.path());
  AttentionProblem p;
  p.dtype = DType::kBF16;
  p.causal = false;
  parse_attention_shape("b=1,h=4,s=512,d=64", p);
  // Chosen by hand, not the first configs of the space: some configs of it spill for this shape
  // (fa2.bm64.bn64.w4.s1 and fa2.bm128.bn64.w8.s1, 16 bytes each with NVRTC 13.0 on sm_90a) and
  // are rejected before they run. These compile without spills, the broken one with its fault.
  const AttentionConfig good = parse_attention_config_key("fa2.bm128.bn64.w8.s2");
  const AttentionConfig broken = parse_attention_config_key("fa2.bm64.bn32.w4.s2");
  const AttentionConfig other = parse_attention_config_key("fa2.bm64.bn128.w4.s2");
  for (const AttentionConfig& c : {good, broken, other})
    ASSERT_FALSE(validate(p, c, device_)) << to_key(c);
  TuneOptions o;
  o.configs = {to_key(good), to_key(broken), to_key(other)};
  o.seed = 99;
  o.isolation.candidate_timeout_s = 5;
  o.isolation.test_faults = {{to_key(broken), TestFault::kOutOfBounds}};
  const TuneReport r = tune_problem(to_key(p), db, o);
  print_counts("attention with an oob fault", r);
  auto s = statuses(r);
  EXPECT_EQ(s[to_key(broken)], cache::Status::kIllegalAddress);
  EXPECT_EQ(s[to_key(good)], cache::Status::kOk);
  EXPECT_EQ(s[to_key(other)], cache::Status::kOk);
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_NE(r.candidates[*r.winner].config_key, to_key(broken));
  EXPECT_EQ(r.num_worker_restarts, 1);
  EXPECT_EQ(db.blocklist().size(), 1u);
  kt::testing::expect_consistent(file.path(), {to_key(p)}, 3);
}

}  // namespace
}  // namespace kt::tune
