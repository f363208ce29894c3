// The attention op's vocabulary: keys round-trip, shapes parse with defaults and clear errors,
// the causal pair count follows the bottom-right alignment, and every enumerated config
// validates with a launch grid of B x Hq x ceil(Nq / Br).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/attention_config.hpp"
#include "core/error.hpp"

namespace kt {
namespace {

AttentionProblem shape(const char* text, bool causal = false) {
  AttentionProblem p;
  p.causal = causal;
  parse_attention_shape(text, p);
  return p;
}

TEST(AttentionKey, GoldenStringAndRoundTrip) {
  const AttentionProblem p = shape("b=4,hq=32,hkv=8,sq=4096,sk=2048,d=128", true);
  EXPECT_EQ(to_key(p), "attn:bf16:b4.hq32.hkv8.sq4096.sk2048.d128.causal");
  EXPECT_EQ(parse_attention_key(to_key(p)), p);
  const AttentionConfig c{64, 32, 4, 1};
  EXPECT_EQ(to_key(c), "fa2.bm64.bn32.w4.s1");
  EXPECT_EQ(parse_attention_config_key(to_key(c)), c);
  EXPECT_THROW(parse_attention_config_key("fa2.bm064.bn32.w4.s1"), Error);
  EXPECT_THROW(parse_attention_key("attn:bf16:b4.hq32"), Error);
}

TEST(AttentionShape, DefaultsKvHeadsAndKeyLengthToTheQueryOnes) {
  const AttentionProblem p = shape("b=2,h=16,s=512,d=64");
  EXPECT_EQ(p.heads_kv, 16);
  EXPECT_EQ(p.seqlen_k, 512);
  const AttentionProblem q = shape("b=1,hq=8,sq=100,d=128");
  EXPECT_EQ(q.heads_kv, 8);
  EXPECT_EQ(q.seqlen_k, 100);
}

TEST(AttentionShape, ErrorsNameTheField) {
  auto message = [](const char* text) {
    try {
      shape(text);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("b=0,h=2,s=8,d=64").find("batch"), std::string::npos);
  EXPECT_NE(message("b=1,hq=6,hkv=4,s=8,d=64").find("multiple"), std::string::npos);
  EXPECT_NE(message("b=1,h=2,s=8,d=72").find("head_dim"), std::string::npos);
  EXPECT_NE(message("b=1,h=2,s=8,d=64,x=3").find("'x'"), std::string::npos);
  EXPECT_NE(message("b=1,h=2,s=eight,d=64").find("eight"), std::string::npos);
}

TEST(AttentionFlops, CausalCountsTheBottomRightAlignedTriangle) {
  // sq == sk: row i sees i + 1 keys, n (n + 1) / 2 pairs in all.
  EXPECT_DOUBLE_EQ(shape("b=1,h=1,s=1000,d=64", true).visible_pairs(), 1000.0 * 1001 / 2);
  // sq > sk: the first sq - sk rows see nothing, the rest a triangle of sk (sk + 1) / 2.
  EXPECT_DOUBLE_EQ(shape("b=1,h=1,sq=300,sk=100,d=64", true).visible_pairs(), 100.0 * 101 / 2);
  // sq < sk: every row sees sk - sq extra keys.
  EXPECT_DOUBLE_EQ(shape("b=1,h=1,sq=2,sk=10,d=64", true).visible_pairs(), 9.0 + 10.0);
  const AttentionProblem full = shape("b=2,h=3,sq=5,sk=7,d=64");
  EXPECT_DOUBLE_EQ(full.flops(), 4.0 * 2 * 3 * 5 * 7 * 64);
}

TEST(AttentionFlops, CausalClosedFormEqualsTheRowByRowCount) {
  for (std::int64_t sq : {1, 2, 7, 64, 333}) {
    for (std::int64_t sk : {1, 3, 64, 500}) {
      AttentionProblem p;
      p.seqlen_q = sq;
      p.seqlen_k = sk;
      p.causal = true;
      double rows = 0;
      for (std::int64_t i = 0; i < sq; ++i)
        rows += double(std::clamp<std::int64_t>(i + sk - sq + 1, 0, sk));
      EXPECT_DOUBLE_EQ(p.visible_pairs(), rows) << "sq=" << sq << " sk=" << sk;
    }
  }
}

TEST(AttentionFlops, CausalCountOfTheLargestShapeIsImmediateAndFinite) {
  AttentionProblem p;
  p.seqlen_q = p.seqlen_k = std::numeric_limits<std::int32_t>::max();
  p.causal = true;
  const double n = double(p.seqlen_q);
  EXPECT_DOUBLE_EQ(p.visible_pairs(), n * (n + 1) / 2);
}

TEST(AttentionConfigSpace, EveryEnumeratedConfigValidatesAndPlansTheFlashAttentionGrid) {
  const DeviceDesc& h200 = device_profile("h200");
  for (const char* text : {"b=4,hq=32,hkv=8,s=4096,d=128", "b=1,h=2,s=1,d=256", "b=3,h=5,sq=1000,sk=7,d=96"}) {
    const AttentionProblem p = shape(text);
    const auto configs = enumerate_attention_configs(p, h200);
    ASSERT_FALSE(configs.empty()) << text;
    for (const AttentionConfig& c : configs) {
      EXPECT_FALSE(validate(p, c, h200)) << text << " " << to_key(c);
      const LaunchPlan plan = plan_launch(p, c);
      EXPECT_EQ(plan.grid[0], std::uint32_t((p.seqlen_q + c.block_m - 1) / c.block_m));
      EXPECT_EQ(plan.grid[1], std::uint32_t(p.heads_q));
      EXPECT_EQ(plan.grid[2], std::uint32_t(p.batch));
      EXPECT_EQ(plan.num_threads(), std::uint32_t(32 * c.warps));
      const AttentionEstimate e = estimate(p, c, h200);
      EXPECT_GT(e.predicted_us, 0) << to_key(c);
      EXPECT_EQ(e.num_ctas, plan.num_ctas());
    }
  }
}

}  // namespace
}  // namespace kt
