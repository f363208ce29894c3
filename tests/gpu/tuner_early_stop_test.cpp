// The measured early stop on the GPU (protocol 4): after a fast candidate is timed fully, one
// whose probe repetitions are all over 1.05 x its median stops after them (its row holds the
// probe and says so), and the pick is the fast one; with the margin off both are timed fully.
#include <gtest/gtest.h>

#include <string>

#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "gpu/gpu_fixture.hpp"
#include "support/isolation.hpp"
#include "tuner/problem_tuner.hpp"

namespace kt {
namespace {

using TunerEarlyStop = testing::GpuTest;

constexpr const char* kProblem = "gemm:bf16:bf16:nt:4096x4096x4096";
// mma.sync on Hopper runs 4096^3 at about half the wgmma pick's rate: clearly slower.
constexpr const char* kSlow = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";

tune::TuneOptions two_candidates(const DeviceDesc& device) {
  tune::TuneOptions o;
  o.configs = {op_spec_for_key(kProblem).ranked_configs(kProblem, device).front().config_key,
               kSlow};
  // One compile thread: the fast candidate is compiled, so measured, first and sets the bar.
  o.compile_threads = 1;
  o.finalists = 1;  // no re-measurement: the first pass is what the test reads
  o.seed = 41;
  return o;
}

TEST_F(TunerEarlyStop, AClearlySlowerCandidateStopsAfterItsProbe) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the fast candidate is an sm90 config";
  kt::testing::ScratchDb file("kt_early_stop");
  cache::Database db = cache::Database::open(file.path());
  const tune::TuneReport r = tune::tune_problem(kProblem, db, two_candidates(device_));
  ASSERT_EQ(r.candidates.size(), 2u);
  const tune::Candidate &fast = r.candidates[0], &slow = r.candidates[1];
  ASSERT_EQ(fast.status, cache::Status::kOk) << fast.detail;
  ASSERT_EQ(slow.status, cache::Status::kOk) << slow.detail;
  EXPECT_FALSE(fast.timing.stopped_early);
  EXPECT_GE(fast.timing.num_reps, tune::BenchmarkOptions{}.min_reps);
  EXPECT_TRUE(slow.timing.stopped_early)
      << slow.timing.median_us << " vs " << fast.timing.median_us;
  EXPECT_EQ(slow.timing.num_reps, tune::BenchmarkOptions{}.probe_reps);
  EXPECT_GT(slow.timing.median_us, 1.05 * fast.timing.median_us);
  EXPECT_EQ(slow.detail.rfind("stopped early", 0), 0u) << slow.detail;
  EXPECT_EQ(r.num_measured, 2);
  EXPECT_EQ(r.num_stopped_early, 1);
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_EQ(*r.winner, 0u);
  const cache::TuningKey key{kProblem, device_.fingerprint(), kBenchmarkProtocolVersion,
                             kGemmTemplateVersion};
  for (const cache::Measurement& m : db.measurements(key)) {
    if (m.config_key == kSlow) {
      EXPECT_EQ(m.num_reps, tune::BenchmarkOptions{}.probe_reps);
    }
  }
}

TEST_F(TunerEarlyStop, WithoutAMarginEveryCandidateIsTimedFully) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the fast candidate is an sm90 config";
  kt::testing::ScratchDb file("kt_early_stop_off");
  cache::Database db = cache::Database::open(file.path());
  tune::TuneOptions o = two_candidates(device_);
  o.early_stop_margin = 0;
  const tune::TuneReport r = tune::tune_problem(kProblem, db, o);
  ASSERT_EQ(r.candidates.size(), 2u);
  for (const tune::Candidate& c : r.candidates) {
    ASSERT_EQ(c.status, cache::Status::kOk) << c.config_key << ": " << c.detail;
    EXPECT_FALSE(c.timing.stopped_early) << c.config_key;
    EXPECT_GE(c.timing.num_reps, tune::BenchmarkOptions{}.min_reps) << c.config_key;
  }
  EXPECT_EQ(r.num_stopped_early, 0);
}

}  // namespace
}  // namespace kt
