// `kerntune trace --op attention` on the GPU: a traced fa3 launch computes the same O (checked);
// every CTA stamps its first tile's phases in causal order, each on one of the device's SMs, with
// a plausible SM clock, and the tiles it worked: one CTA a query block one, a persistent grid's
// CTAs all of them between them.
#include <gtest/gtest.h>

#include <cstddef>
#include <iterator>
#include <map>
#include <string>

#include "core/attention_config.hpp"
#include "core/attention_problem.hpp"
#include "gpu/gpu_fixture.hpp"
#include "ops/attention/attention_trace.hpp"

namespace kt {
namespace {

class AttentionTraceTest : public testing::GpuTest {};

TEST_F(AttentionTraceTest, FirstTilePhasesOfEveryCtaComeBackInOrder) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the fa3 family needs an sm_90a device";
  const AttentionProblem p = parse_attention_key("attn:bf16:b4.hq16.hkv16.sq512.sk512.d128.causal");
  for (const char* key : {"fa3.bm128.bn128.s2.pp", "fa3.bm128.bn128.s2.pp.pers"}) {
    SCOPED_TRACE(key);
    const AttentionConfig c = parse_attention_config_key(key);
    const tune::KernelTrace t = tune::trace_attention(p, c, 5);
    EXPECT_TRUE(t.check_passed) << t.check_detail;
    EXPECT_GT(t.median_us, 0.0);
    if (!c.persistent) {
      EXPECT_EQ(t.grid, 4 * 16 * 4);  // query blocks x heads x batch
    }
    ASSERT_GT(t.grid, 0);
    ASSERT_EQ(t.ctas.size(), std::size_t(t.grid));
    std::map<std::string, tune::KernelTracePhase> by_name;
    for (const auto& ph : t.phases) by_name[ph.name] = ph;
    const char* order[] = {"entry",          "Q landed", "first S done",
                           "main loop done", "O stored", "CTA done"};
    for (const char* name : order) {
      ASSERT_TRUE(by_name.count(name)) << name;
      EXPECT_EQ(by_name[name].ctas, t.grid) << name;
    }
    int tiles = 0;  // worked by all CTAs: every tile once
    for (const tune::KernelTraceCta& cta : t.ctas) {
      EXPECT_GE(cta.units, 1) << "CTA " << cta.cta;
      if (!c.persistent) {
        EXPECT_EQ(cta.units, 1) << "CTA " << cta.cta;
      }
      tiles += cta.units;
      EXPECT_GE(cta.sm, 0) << "CTA " << cta.cta;
      EXPECT_LT(cta.sm, device_.num_sms) << "CTA " << cta.cta;
      ASSERT_EQ(cta.us.size(), std::size(order));
      for (std::size_t e = 1; e < std::size(order); ++e)
        EXPECT_LE(cta.us[e - 1], cta.us[e]) << "CTA " << cta.cta << ", " << order[e];
      EXPECT_GT(cta.sm_mhz, 300.0) << "CTA " << cta.cta;
      EXPECT_LT(cta.sm_mhz, 3000.0) << "CTA " << cta.cta;
    }
    EXPECT_EQ(tiles, 4 * 16 * 4);
  }
}

}  // namespace
}  // namespace kt
