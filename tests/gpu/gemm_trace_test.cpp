// `kerntune trace` on the GPU: a traced sm90 launch computes the same C (checked), its phases
// come back stamped by every CTA in causal order, unsplit and split-K, each CTA's SM is one of
// the device's, no two CTAs on one SM (these configs fit one CTA an SM), and each SM's clock over
// the main loop is a plausible one.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "gpu/gpu_fixture.hpp"
#include "ops/gemm/gemm_trace.hpp"
#include "support/gemm_builders.hpp"

namespace kt {
namespace {

class GemmTraceTest : public testing::GpuTest {};

TEST_F(GemmTraceTest, PhasesOfEveryCtaComeBackInOrder) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  struct Case {
    const char* shape;
    const char* key;
    int grid;
    bool split;
  } cases[] = {{"64x4096x1024", "sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk4", 128, true},
               {"256x512x2048", "sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk1", 8, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    const GemmProblem p = testing::shaped_problem(c.shape, Layout::kNT, DType::kBF16, DType::kBF16);
    const tune::KernelTrace t = tune::trace_gemm(p, parse_gemm_config_key(c.key), 5);
    EXPECT_TRUE(t.check_passed) << t.check_detail;
    EXPECT_EQ(t.grid, c.grid);
    EXPECT_GT(t.median_us, 0.0);
    std::map<std::string, tune::KernelTracePhase> by_name;
    for (const auto& ph : t.phases) by_name[ph.name] = ph;
    const char* order[] = {"entry", "first load issued", "first stage full", "main loop done",
                           "C stored"};
    for (const char* name : order) {
      ASSERT_TRUE(by_name.count(name)) << name;
      EXPECT_EQ(by_name[name].ctas, c.grid) << name;
    }
    for (std::size_t i = 1; i < std::size(order); ++i)
      EXPECT_LE(by_name[order[i - 1]].median_us, by_name[order[i]].median_us) << order[i];
    ASSERT_EQ(t.ctas.size(), std::size_t(c.grid));
    std::set<int> sms;
    for (const tune::KernelTraceCta& cta : t.ctas) {
      EXPECT_GE(cta.sm, 0) << "CTA " << cta.cta;
      EXPECT_LT(cta.sm, device_.num_sms) << "CTA " << cta.cta;
      sms.insert(cta.sm);
      ASSERT_EQ(cta.us.size(), t.event_labels.size());
      // entry, first load issued, first stage full, main loop done: stamped, in this order.
      for (std::size_t e = 0; e < 4; ++e) {
        EXPECT_GE(cta.us[e], 0.0) << "CTA " << cta.cta << ", " << t.event_labels[e];
        if (e > 0) {
          EXPECT_LE(cta.us[e - 1], cta.us[e]) << "CTA " << cta.cta << ", " << t.event_labels[e];
        }
      }
    }
    EXPECT_EQ(sms.size(), std::size_t(c.grid));
    // The SMs' clock over entry -> main loop done: stamped by every CTA, an H200's range.
    for (const tune::KernelTraceCta& cta : t.ctas) {
      EXPECT_GT(cta.sm_mhz, 300.0) << "CTA " << cta.cta;
      EXPECT_LT(cta.sm_mhz, 3000.0) << "CTA " << cta.cta;
    }
    EXPECT_LE(t.sm_mhz_p10, t.sm_mhz_median);
    EXPECT_LE(t.sm_mhz_median, t.sm_mhz_p90);
    EXPECT_EQ(by_name.count("published"), c.split ? 1u : 0u);
    EXPECT_EQ(by_name.count("flags ready"), c.split ? 1u : 0u);
    if (c.split) {
      EXPECT_LE(by_name["main loop done"].median_us, by_name["published"].median_us);
      EXPECT_LE(by_name["published"].median_us, by_name["flags ready"].median_us);
      EXPECT_LE(by_name["flags ready"].median_us, by_name["C stored"].median_us);
    }
  }
}

TEST_F(GemmTraceTest, RefusesConfigsWithoutMarks) {
  const GemmProblem p =
      testing::shaped_problem("64x64x64", Layout::kNT, DType::kBF16, DType::kBF16);
  EXPECT_THROW(
      tune::trace_gemm(p, parse_gemm_config_key("sm80.bm64.bn64.bk32.wm32.wn32.s3.g8.sk1"), 1),
      Error);
}

}  // namespace
}  // namespace kt
