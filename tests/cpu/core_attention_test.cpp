// The attention op's vocabulary: keys of both families round-trip, shapes parse with defaults and
// clear errors, the causal pair count follows the bottom-right alignment, every enumerated config
// validates with a launch grid of B x Hq x ceil(Nq / Br), and the fa3 family's rules, launch
// plan and model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "common/work_order.h"
#include "core/attention_config.hpp"
#include "core/attention_order.hpp"
#include "core/error.hpp"
#include "support/attention_builders.hpp"

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

// Packed varlen batches: the key names the bucket (longest lengths and totals), round-trips,
// parses from tq/tk, refuses totals no batch of those lengths holds; the synthetic batch sums to
// the totals with the longest first; buckets round up within what such a batch holds.
TEST(AttentionVarlen, KeysShapesBucketsAndSyntheticLengths) {
  const AttentionProblem p = shape("b=4,hq=32,hkv=8,sq=1000,tq=2500,d=128", true);
  EXPECT_TRUE(p.varlen);
  EXPECT_EQ(p.total_q, 2500);
  EXPECT_EQ(p.total_k, 2500);
  EXPECT_EQ(p.seqlen_k, 1000);
  EXPECT_EQ(to_key(p), "attn:bf16:b4.hq32.hkv8.sq1000.sk1000.d128.causal.varlen.tq2500.tk2500");
  EXPECT_EQ(parse_attention_key(to_key(p)), p);
  EXPECT_EQ(varlen_lengths(p, false), (std::vector<std::int64_t>{1000, 500, 500, 500}));
  const AttentionProblem odd = shape("b=3,h=2,sq=7,sk=9,tq=10,tk=12,d=64");
  EXPECT_EQ(varlen_lengths(odd, false), (std::vector<std::int64_t>{7, 2, 1}));
  EXPECT_EQ(varlen_lengths(odd, true), (std::vector<std::int64_t>{9, 2, 1}));
  // Visible pairs per sequence: 7x9 + 2x2 + 1x1 per head.
  EXPECT_DOUBLE_EQ(odd.visible_pairs(), 2.0 * (63 + 4 + 1));
  EXPECT_DOUBLE_EQ(odd.min_bytes(), 2.0 * 64 * (2 * 2 * 10 + 2 * 2 * 12));

  for (const char* bad : {"b=4,h=8,sq=1000,tq=1002,d=128", "b=4,h=8,sq=1000,tq=4001,d=128",
                          "b=2,h=8,sq=10,tk=12,d=128"})
    EXPECT_THROW(shape(bad), Error) << bad;
  EXPECT_THROW(parse_attention_key("attn:bf16:b4.hq8.hkv8.sq100.sk100.d128.full.tq300.tk300"),
               Error);
  EXPECT_THROW(parse_attention_key("attn:bf16:b4.hq8.hkv8.sq100.sk100.d128.full.varlen.tq300"),
               Error);

  const AttentionProblem bucket = varlen_bucket(shape("b=16,hq=32,hkv=8,sq=5000,tq=41000,d=128"));
  EXPECT_EQ(bucket.seqlen_q, 8192);
  EXPECT_EQ(bucket.total_q, 65536);
  EXPECT_EQ(bucket.batch, 16);
  // Two sequences of 1000 and 1: the longest rounds to 1024, so the total is at least 1025.
  const AttentionProblem two = varlen_bucket(shape("b=2,h=4,sq=1000,tq=1001,d=64"));
  EXPECT_EQ(two.seqlen_q, 1024);
  EXPECT_EQ(two.total_q, 1025);
  EXPECT_NO_THROW(validate(two));
  EXPECT_EQ(varlen_bucket(shape("b=2,h=4,sq=3,tq=4,d=64")).seqlen_q, 64);

  // No split-KV or packed GQA rows for a packed batch; the model counts its CTAs with work.
  const DeviceDesc& h200 = device_profile("h200");
  AttentionConfig split = testing::fa3_config(64, 64, 2);
  split.splits = 2;
  const AttentionProblem short_rows = shape("b=4,h=8,sq=64,sk=4096,tq=200,tk=9000,d=128");
  const auto why = validate(short_rows, split, h200);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("varlen"), std::string::npos) << *why;
  const AttentionEstimate e = estimate(p, testing::fa3_config(128, 128, 2, true), h200);
  EXPECT_EQ(e.num_ctas, (8 + 4 + 4 + 4) * 32);
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
  for (const char* text :
       {"b=4,hq=32,hkv=8,s=4096,d=128", "b=1,h=2,s=1,d=256", "b=3,h=5,sq=1000,sk=7,d=96"}) {
    const AttentionProblem p = shape(text);
    const auto configs = enumerate_attention_configs(p, h200);
    ASSERT_FALSE(configs.empty()) << text;
    for (const AttentionConfig& c : configs) {
      EXPECT_FALSE(validate(p, c, h200)) << text << " " << to_key(c);
      const LaunchPlan plan = plan_launch(p, c);
      if (c.persistent) {
        EXPECT_EQ(plan.num_ctas(), num_tiles(p, c)) << to_key(c);
        EXPECT_EQ(plan_launch(p, c, 132).num_ctas(), 132) << to_key(c);
      } else {
        EXPECT_EQ(plan.grid[0], std::uint32_t((p.seqlen_q + c.block_m - 1) / c.block_m));
        EXPECT_EQ(plan.grid[1], std::uint32_t(p.heads_q));
        EXPECT_EQ(plan.grid[2], std::uint32_t(p.batch));
      }
      EXPECT_EQ(plan.num_threads(), std::uint32_t(c.num_threads()));
      const AttentionEstimate e = estimate(p, c, h200);
      EXPECT_GT(e.predicted_us, 0) << to_key(c);
      EXPECT_EQ(e.num_ctas, plan.num_ctas());
    }
  }
}

using testing::fa3_config;

std::string why_invalid(const char* text, const AttentionConfig& c, const char* profile) {
  return validate(shape(text), c, device_profile(profile)).value_or("valid");
}

const AttentionConfig* best_of(const std::vector<RankedAttentionConfig>& ranked, AttentionFamily f,
                               AttentionEstimate* e = nullptr) {
  for (const auto& r : ranked)
    if (r.config.family == f) {
      if (e != nullptr) *e = r.estimate;
      return &r.config;
    }
  return nullptr;
}

TEST(AttentionKey, Fa3KeysRoundTripAndFa2KeysKeepTheirSpelling) {
  const AttentionConfig c = parse_attention_config_key("fa3.bm128.bn128.s2");
  EXPECT_EQ(c, fa3_config(128, 128, 2));
  EXPECT_EQ(c.warps, 0);
  EXPECT_EQ(c.num_threads(), 384);
  EXPECT_EQ(fa3_config(64, 64, 3).num_threads(), 160);  // one consumer, a one-warp producer
  EXPECT_EQ(to_key(fa3_config(64, 128, 1)), "fa3.bm64.bn128.s1");
  for (const AttentionConfig& k :
       {fa3_config(64, 64, 1), fa3_config(128, 64, 3), AttentionConfig{128, 64, 8, 2}})
    EXPECT_EQ(parse_attention_config_key(to_key(k)), k) << to_key(k);
  const AttentionConfig fa2 = parse_attention_config_key("fa2.bm128.bn64.w8.s2");
  EXPECT_EQ(fa2.family, AttentionFamily::kSm80);
  EXPECT_EQ(to_key(fa2), "fa2.bm128.bn64.w8.s2");
}

TEST(AttentionKey, NonCanonicalFa3KeysAreRefusedWithTheReason) {
  auto message = [](const char* key) {
    try {
      parse_attention_config_key(key);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << key;
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_NE(message("fa3.bm0128.bn128.s2").find("write it as 'fa3.bm128.bn128.s2'"),
            std::string::npos);
  EXPECT_NE(message("fa3.bm128.bn128.w12.s2").find("not an attention config key"),
            std::string::npos);
  EXPECT_NE(message("fa3.bm128.bn128").find("not an attention config key"), std::string::npos);
  EXPECT_NE(message("FA3.bm128.bn128.s2").find("not an attention config key"), std::string::npos);
  EXPECT_NE(message("fa3.bn128.bm128.s2").find("should start with 'bm'"), std::string::npos);
  EXPECT_NE(message("fa3.bm128.bn128.w2").find("should start with 's'"), std::string::npos);
  EXPECT_NE(message("fa3.bm128.bn128.s0").find("out of range"), std::string::npos);
  EXPECT_NE(message("fa3.bm128.bn128.s+2").find("not an integer"), std::string::npos);
  EXPECT_NE(message("fa2.bm128.bn128.s2").find("not an attention config key"), std::string::npos);
}

TEST(AttentionFa3, ValidateNeedsSm90aItsHeadDimsAndTheSharedMemory) {
  const char* d128 = "b=4,hq=32,hkv=8,s=4096,d=128";
  EXPECT_EQ(why_invalid(d128, fa3_config(128, 128, 2), "h200"), "valid");
  EXPECT_EQ(why_invalid(d128, fa3_config(64, 64, 4), "h100-sxm"), "valid");
  EXPECT_NE(why_invalid(d128, fa3_config(128, 128, 2), "a100")
                .find("needs sm_90a (compute capability 9.0)"),
            std::string::npos);
  EXPECT_NE(why_invalid("b=1,h=2,s=777,d=96", fa3_config(128, 128, 2), "h200")
                .find("head_dim 64, 128 or 256"),
            std::string::npos);
  EXPECT_NE(why_invalid("b=1,h=2,s=777,d=256", fa3_config(128, 128, 2), "h200").find("block_n 64"),
            std::string::npos);
  EXPECT_EQ(why_invalid("b=1,h=2,s=777,d=256", fa3_config(128, 64, 2), "h200"), "valid");
  // d256: 2048 + 128*256*2 + 3*2*64*256*2 = 264192 B > 232448 B; d128: 2048 + 128*128*2 +
  // 4*2*128*128*2 = 296960 B.
  EXPECT_NE(why_invalid("b=1,h=2,s=777,d=256", fa3_config(128, 64, 3), "h200")
                .find("264192 B of shared memory"),
            std::string::npos);
  EXPECT_NE(why_invalid(d128, fa3_config(256, 128, 2), "h200").find("block_m"), std::string::npos);
  EXPECT_NE(why_invalid(d128, fa3_config(128, 32, 2), "h200").find("block_n"), std::string::npos);
  EXPECT_NE(why_invalid(d128, fa3_config(128, 128, 4), "h200").find("296960 B of shared memory"),
            std::string::npos);
  EXPECT_NE(why_invalid(d128, fa3_config(128, 128, 1), "h200").find("stages must be 2, 3 or 4"),
            std::string::npos);
  EXPECT_NE(why_invalid(d128, AttentionConfig{128, 128, 8, 2, AttentionFamily::kSm90}, "h200")
                .find("warps"),
            std::string::npos);
}

TEST(AttentionFa3, TheSpaceHasFa3ConfigsOnHopperOnly) {
  auto count_fa3 = [](const char* text, const char* profile) {
    int n = 0;
    for (const AttentionConfig& c :
         enumerate_attention_configs(shape(text), device_profile(profile)))
      n += c.family == AttentionFamily::kSm90;
    return n;
  };
  // d128: bm64 x bn 64/128 x s 2-4 (5: bn128.s4 does not fit in 227 KB), bm128 the same with and
  // without ping-pong (10). d64 adds bm192 x bn 64/128 x s 2-4 x ping-pong (12): 6 + 12 + 12. d256
  // (bn 64 only): bm64.s2, bm64.s3, bm128.s2 and bm128.s2.pp.
  // Each again persistent where a second Q buffer fits too: at d128 all but
  // bm128.bn128.s3 with and without ping-pong, at d64 all, at d256 bm64.bn64.s2 alone.
  // 80-key blocks (d256 only): bm64.s2 (and persistent), bm128.s2 and .pp.
  EXPECT_EQ(count_fa3("b=4,h=16,s=4096,d=128", "h200"), 15 + 13);
  EXPECT_EQ(count_fa3("b=4,h=16,s=4096,d=64", "h100-sxm"), 30 + 30);
  EXPECT_EQ(count_fa3("b=2,h=8,s=4096,d=256", "h200"), 4 + 1 + 4);
  EXPECT_EQ(count_fa3("b=2,h=8,s=777,d=96", "h200"), 0);
  EXPECT_EQ(count_fa3("b=4,h=16,s=4096,d=128", "a100"), 0);
  AttentionDomains fa2_only;
  fa2_only.families = {AttentionFamily::kSm80};
  for (const AttentionConfig& c :
       enumerate_attention_configs(shape("b=1,h=2,s=64,d=128"), device_profile("h200"), fa2_only))
    EXPECT_EQ(c.family, AttentionFamily::kSm80) << to_key(c);
}

TEST(AttentionFa3, LaunchPlanIsAProducerPlusConsumerWarpgroupsOverTheFlashGrid) {
  const AttentionProblem p = shape("b=4,hq=32,hkv=8,sq=1000,sk=4097,d=128", true);
  const LaunchPlan two = plan_launch(p, fa3_config(128, 128, 2));
  EXPECT_EQ(two.grid[0], 8u);
  EXPECT_EQ(two.grid[1], 32u);
  EXPECT_EQ(two.grid[2], 4u);
  EXPECT_EQ(two.num_threads(), 384u);
  EXPECT_EQ(two.smem_bytes, 2048u + 128 * 128 * 2 + 2 * 2 * 128 * 128 * 2);
  const LaunchPlan one = plan_launch(p, fa3_config(64, 64, 3));
  EXPECT_EQ(one.grid[0], 16u);
  EXPECT_EQ(one.num_threads(), 160u);
  EXPECT_EQ(one.smem_bytes, 2048u + 64 * 128 * 2 + 3 * 2 * 64 * 128 * 2);
  EXPECT_EQ(attention_kernel_expression(p, fa3_config(128, 128, 2), true),
            "kt::attention_fwd_sm90<kt::bf16, 128, 128, 128, 2, false, false, true, true, false>");
  AttentionProblem fp16 = p;
  fp16.dtype = DType::kFP16;
  fp16.causal = false;
  EXPECT_EQ(attention_kernel_expression(fp16, fa3_config(64, 64, 1), false),
            "kt::attention_fwd_sm90<kt::fp16, 128, 64, 64, 1, false, false, false, false, false>");
  EXPECT_EQ(attention_kernel_expression(p, fa3_config(128, 128, 3, true), false),
            "kt::attention_fwd_sm90<kt::bf16, 128, 128, 128, 3, true, false, true, false, false>");
  const LaunchPlan three = plan_launch(shape("b=1,h=8,s=1000,d=64"), fa3_config(192, 128, 2, true));
  EXPECT_EQ(three.grid[0], 6u);
  EXPECT_EQ(three.num_threads(), 512u);
}

TEST(AttentionFa3, PingPongThreeConsumersAndWideBlocksHaveTheirRules) {
  const DeviceDesc& h200 = device_profile("h200");
  EXPECT_EQ(to_key(fa3_config(128, 128, 3, true)), "fa3.bm128.bn128.s3.pp");
  EXPECT_EQ(parse_attention_config_key("fa3.bm192.bn128.s3.pp"), fa3_config(192, 128, 3, true));
  EXPECT_EQ(parse_attention_config_key("fa3.bm128.bn128.s3"), fa3_config(128, 128, 3));
  EXPECT_THROW(parse_attention_config_key("fa3.bm128.bn128.s3.p"), Error);
  const AttentionProblem d64 = shape("b=1,h=8,s=1000,d=64"), d128 = shape("b=1,h=8,s=1000,d=128");
  auto why = [&](const AttentionProblem& p, const AttentionConfig& c) {
    const auto w = validate(p, c, h200);
    return w ? *w : std::string();
  };
  EXPECT_NE(why(d128, fa3_config(64, 128, 2, true)).find("ping-pong needs two or three"),
            std::string::npos);
  EXPECT_NE(why(d128, fa3_config(192, 128, 2, true)).find("block_m 192 needs head_dim 64"),
            std::string::npos);

  EXPECT_EQ(why(d64, fa3_config(192, 128, 2, true)), "");
  EXPECT_EQ(why(d128, fa3_config(128, 128, 3, true)), "");

  // Key blocks of 80 at d256, whose registers leave 128 out; the model counts a block's overhead,
  // so wider blocks run a little faster per key.
  const AttentionProblem d256 = shape("b=1,h=8,s=1000,d=256");
  EXPECT_EQ(parse_attention_config_key("fa3.bm128.bn80.s2.pp"), fa3_config(128, 80, 2, true));
  EXPECT_EQ(why(d256, fa3_config(128, 80, 2, true)), "");
  EXPECT_NE(why(d128, fa3_config(128, 80, 2)).find("block_n 80 is for head_dim 256"),
            std::string::npos);
  EXPECT_NE(why(d128, fa3_config(128, 176, 2)).find("64, 80 or 128"), std::string::npos);
  const AttentionProblem long_d256 = shape("b=1,h=16,s=16384,d=256");
  EXPECT_LT(estimate(long_d256, fa3_config(128, 80, 2, true), h200).predicted_us,
            estimate(long_d256, fa3_config(128, 64, 2, true), h200).predicted_us);
}

TEST(AttentionFa3, PackedGqaMakesAKvHeadsQueryHeadsItsRows) {
  const DeviceDesc& h200 = device_profile("h200");
  AttentionConfig packed = fa3_config(64, 128, 3);
  packed.pack_gqa = true;
  EXPECT_EQ(to_key(packed), "fa3.bm64.bn128.s3.gqa");
  EXPECT_EQ(parse_attention_config_key("fa3.bm64.bn128.s3.gqa"), packed);
  EXPECT_THROW(parse_attention_config_key("fa3.bm64.bn128.s3.gqa.pp"), Error);
  const AttentionProblem decode = shape("b=32,hq=32,hkv=8,sq=1,sk=4096,d=128", true);
  const AttentionProblem k = kernel_problem(decode, packed);
  EXPECT_EQ(k.heads_q, 8);
  EXPECT_EQ(k.heads_kv, 8);
  EXPECT_EQ(k.seqlen_q, 4);
  EXPECT_FALSE(k.causal);
  EXPECT_EQ(kernel_problem(decode, fa3_config(64, 128, 3)), decode);
  const LaunchPlan plan = plan_launch(decode, packed);
  EXPECT_EQ(plan.grid[0], 1u);
  EXPECT_EQ(plan.grid[1], 8u);
  EXPECT_EQ(plan.grid[2], 32u);
  EXPECT_EQ(attention_kernel_expression(decode, packed, false),
            "kt::attention_fwd_sm90<kt::bf16, 128, 64, 128, 3, false, false, false, false, false>");
  EXPECT_EQ(validate(decode, packed, h200), std::nullopt);
  auto refused = [&](const char* text, const AttentionConfig& c) {
    const auto why = validate(shape(text), c, h200);
    return why && why->find("pack_gqa needs") != std::string::npos;
  };
  EXPECT_TRUE(refused("b=2,hq=8,hkv=8,sq=1,sk=100,d=128", packed));  // no GQA
  EXPECT_TRUE(refused("b=2,hq=8,hkv=2,sq=2,sk=100,d=128", packed));  // two query rows
  AttentionConfig two = fa3_config(128, 128, 3);
  two.pack_gqa = true;
  EXPECT_TRUE(refused("b=2,hq=8,hkv=2,sq=1,sk=100,d=128", two));  // block_m 128
}

// Split-KV: keys, the rule (one query block a head, the smallest that holds its rows, and no
// more splits than key blocks), the grid (every split of every query block), the workspace of
// partials, the second kernel, and a model that splits a decode step too short for the SMs.
TEST(AttentionFa3, SplitKvKeysRulesGridWorkspaceAndModel) {
  const DeviceDesc& h200 = device_profile("h200");
  AttentionConfig c = fa3_config(64, 64, 3);
  c.pack_gqa = true;
  c.splits = 8;
  EXPECT_EQ(to_key(c), "fa3.bm64.bn64.s3.gqa.kv8");
  EXPECT_EQ(parse_attention_config_key("fa3.bm64.bn64.s3.gqa.kv8"), c);
  AttentionConfig pp = fa3_config(128, 128, 2, true);
  pp.splits = 3;
  EXPECT_EQ(parse_attention_config_key("fa3.bm128.bn128.s2.pp.kv3"), pp);
  for (const char* bad : {"fa3.bm64.bn64.s3.kv1", "fa3.bm64.bn64.s3.kv33", "fa3.bm64.bn64.s3.kvx",
                          "fa3.bm64.bn64.s3.kv4.gqa", "fa3.bm64.bn64.s3.kv04"})
    EXPECT_THROW(parse_attention_config_key(bad), Error) << bad;

  AttentionProblem decode = shape("b=32,hq=32,hkv=8,sq=1,sk=1024,d=128");
  EXPECT_EQ(validate(decode, c, h200), std::nullopt);
  const LaunchPlan plan = plan_launch(decode, c);
  EXPECT_EQ(plan.grid[0], 8u);  // one packed query block x 8 splits
  EXPECT_EQ(plan.grid[1], 8u);
  EXPECT_EQ(plan.grid[2], 32u);
  EXPECT_EQ(num_tiles(decode, c), 8 * 8 * 32);
  EXPECT_EQ(split_workspace_bytes(decode, c), 8 * 32 * 32 * (128 + 1) * 4);
  EXPECT_EQ(split_workspace_bytes(decode, fa3_config(64, 64, 3)), 0);
  const LaunchPlan combine = plan_split_combine(decode, c);
  EXPECT_EQ(combine.grid[0], 32u * 32 / 4);
  EXPECT_EQ(combine.num_threads(), 128u);
  EXPECT_EQ(split_combine_expression(decode), "kt::attention_split_combine<kt::bf16, 128>");
  EXPECT_EQ(attention_kernel_expression(decode, c, true),
            "kt::attention_fwd_sm90<kt::bf16, 128, 64, 64, 3, false, true, false, false, false>");

  auto refused = [&](const char* text, const AttentionConfig& config, const char* why) {
    const auto r = validate(shape(text), config, h200);
    return r && r->find(why) != std::string::npos;
  };
  AttentionConfig split = fa3_config(64, 128, 2);
  split.splits = 2;
  EXPECT_TRUE(refused("b=1,h=8,sq=65,sk=4096,d=128", split, "one query block a head"));
  EXPECT_TRUE(refused("b=1,h=8,sq=64,sk=128,d=128", split, "than key blocks (1 of"));
  EXPECT_EQ(validate(shape("b=1,h=8,sq=64,sk=129,d=128"), split, h200), std::nullopt);
  AttentionConfig wide = fa3_config(128, 128, 2, true);
  wide.splits = 2;
  EXPECT_TRUE(refused("b=1,h=8,sq=64,sk=4096,d=128", wide, "block_m 64"));
  EXPECT_EQ(validate(shape("b=1,h=8,sq=100,sk=4096,d=128"), wide, h200), std::nullopt);
  EXPECT_TRUE(refused(
      "b=1,h=8,sq=1,sk=4096,d=128",
      []() {
        AttentionConfig f{64, 64, 4, 1};
        f.splits = 2;
        return f;
      }(),
      "splits"));

  // A decode step of 2 x 8 packed CTAs would hold 16 of 132 SMs: the model splits it; a long
  // prefill is never split (one query block a head is required).
  const AttentionProblem small = shape("b=2,hq=32,hkv=8,sq=1,sk=16384,d=128");
  const auto ranked = rank_by_model(small, enumerate_attention_configs(small, h200), h200);
  ASSERT_FALSE(ranked.empty());
  EXPECT_GT(ranked.front().config.splits, 1) << to_key(ranked.front().config);
  EXPECT_GT(ranked.front().estimate.combine_us, 0);
  for (const AttentionConfig& k : enumerate_attention_configs(shape("b=1,h=16,s=4096,d=128"), h200))
    EXPECT_EQ(k.splits, 1) << to_key(k);
}

// Persistent split-KV: a CTA works splits of tiles in turn (a decode step's 256 packed KV heads
// in 8 splits: 2048 items), on the fewest CTAs that take as many turns, so that every CTA streams
// the same number of splits; the model's persistent grid is the launch's, its stream then as even
// as its items.
TEST(AttentionFa3, PersistentSplitKvGridKeyAndModel) {
  const DeviceDesc& h200 = device_profile("h200");
  AttentionConfig c = fa3_config(64, 128, 3);
  c.pack_gqa = true;
  c.splits = 8;
  c.persistent = true;
  EXPECT_EQ(to_key(c), "fa3.bm64.bn128.s3.gqa.kv8.pers");
  EXPECT_EQ(parse_attention_config_key("fa3.bm64.bn128.s3.gqa.kv8.pers"), c);
  EXPECT_THROW(parse_attention_config_key("fa3.bm64.bn128.s3.gqa.pers.kv8"), Error);

  const AttentionProblem decode = shape("b=32,hq=32,hkv=8,sq=1,sk=32768,d=128");
  EXPECT_EQ(validate(decode, c, h200), std::nullopt);
  EXPECT_EQ(num_tiles(decode, c), 32 * 8 * 8);
  EXPECT_EQ(persistent_grid(decode, c, 132), 128);  // 16 turns on 132 or on 128 CTAs
  EXPECT_EQ(persistent_grid(decode, c, 264), 256);
  EXPECT_EQ(persistent_grid(decode, c, 4096), 2048);  // one CTA an item
  EXPECT_EQ(persistent_grid(decode, c, 0), 2048);
  EXPECT_EQ(plan_launch(decode, c, 132).grid, (std::array<std::uint32_t, 3>{128, 1, 1}));
  AttentionConfig whole = fa3_config(128, 128, 2, true);
  whole.persistent = true;  // tiles of uneven causal work keep every resident CTA
  EXPECT_EQ(persistent_grid(shape("b=32,h=16,s=512,d=128", true), whole, 132), 132);
  EXPECT_EQ(attention_kernel_expression(decode, c, false),
            "kt::attention_fwd_sm90<kt::bf16, 128, 64, 128, 3, false, true, false, false, true>");

  // 16 even items a CTA: the stream loses no slot; the grid of one CTA a split (2048 on 132
  // SMs, 15.5 waves) loses its last wave's idle ones.
  const AttentionEstimate e = estimate(decode, c, h200);
  EXPECT_NEAR(e.persistent_imbalance, 1.0, 1e-9);
  const double stream_us = decode.min_bytes() / (h200.dram_gbps * 1e9) * 1e6;
  EXPECT_NEAR(e.memory_us, stream_us, 1e-6 * stream_us);
  AttentionConfig grid = c;
  grid.persistent = false;
  EXPECT_GT(estimate(decode, grid, h200).memory_us, stream_us * 1.02);
}

// Persistent fa3 CTAs: the key, the rules (whole query blocks, more of them than SMs, a second Q
// buffer in shared memory), a grid of the resident CTAs, the template flag, and a model
// that prefers them where many short query blocks each pay a CTA's fixed cost.
TEST(AttentionFa3, PersistentKeysRulesGridAndModel) {
  const DeviceDesc& h200 = device_profile("h200");
  AttentionConfig c = fa3_config(128, 128, 2, true);
  c.persistent = true;
  EXPECT_EQ(to_key(c), "fa3.bm128.bn128.s2.pp.pers");
  EXPECT_EQ(parse_attention_config_key("fa3.bm128.bn128.s2.pp.pers"), c);
  for (const char* bad :
       {"fa3.bm128.bn128.s2.pers.pp", "fa3.bm128.bn128.s2.pers.pers", "fa2.bm128.bn64.w8.s2.pers"})
    EXPECT_THROW(parse_attention_config_key(bad), Error) << bad;

  const AttentionProblem p = shape("b=32,h=16,s=512,d=128");
  EXPECT_EQ(validate(p, c, h200), std::nullopt);
  EXPECT_EQ(smem_bytes(p, c), smem_bytes(p, fa3_config(128, 128, 2, true)) + 128 * 128 * 2);
  EXPECT_EQ(plan_launch(p, c, 132).grid, (std::array<std::uint32_t, 3>{132, 1, 1}));
  EXPECT_EQ(plan_launch(p, c).grid, (std::array<std::uint32_t, 3>{32 * 16 * 4, 1, 1}));
  EXPECT_EQ(plan_launch(p, c, 132).num_threads(), 384u);
  EXPECT_EQ(attention_kernel_expression(p, c, false),
            "kt::attention_fwd_sm90<kt::bf16, 128, 128, 128, 2, true, false, false, false, true>");

  auto refused = [&](const char* text, AttentionConfig config, const char* why) {
    const auto r = validate(shape(text), config, h200);
    return r && r->find(why) != std::string::npos;
  };
  EXPECT_TRUE(refused("b=1,h=4,s=4096,d=128", c, "more query blocks than SMs (128 of 128"));
  EXPECT_EQ(validate(shape("b=1,h=5,s=4096,d=128"), c, h200), std::nullopt);
  AttentionConfig deep = fa3_config(128, 128, 3);
  deep.persistent = true;
  EXPECT_TRUE(refused("b=32,h=16,s=512,d=128", deep, "shared memory"));
  AttentionConfig split = fa3_config(64, 128, 2);
  split.persistent = true;
  split.splits = 2;
  EXPECT_TRUE(refused("b=1,h=64,sq=64,sk=4096,d=128", split, "blocks times splits than SMs (128"));
  EXPECT_EQ(validate(shape("b=1,h=67,sq=64,sk=4096,d=128"), split, h200), std::nullopt);
  AttentionConfig fa2{128, 64, 8, 2};
  fa2.persistent = true;
  EXPECT_TRUE(refused("b=32,h=16,s=512,d=128", fa2, "an fa3 feature"));

  // 2048 query blocks of 512 keys: the launch-per-block configs pay 2.4 us a wave of CTAs, 15.5
  // waves; persistent CTAs pay it once and 0.6 us a further block.
  EXPECT_LT(estimate(p, c, h200).predicted_us,
            estimate(p, fa3_config(128, 128, 2, true), h200).predicted_us * 0.95);
  const auto ranked = rank_by_model(p, enumerate_attention_configs(p, h200), h200);
  EXPECT_TRUE(ranked.front().config.persistent) << to_key(ranked.front().config);

  // Causal, the persistent grid lasts as long as its busiest CTA under the snake over the
  // sectioned order. Under sections of the L2 bound (template version 11) the snake's turns
  // straddle the sections at long rows: measured on the H200
  // (bench/results/2026-12-05-h200-attention-forward-causal-sections/), fa3.bm128.bn128.s2.pp
  // persistent over one CTA a block ran 0.84 at N = 512, 1.01 at 1024, 1.22 at 8192, which is
  // what the model gives those sections. The section is now the model's choice: the one whose
  // busiest CTA works least, sections of whole turns where the rows allow.
  AttentionConfig pers = fa3_config(128, 128, 2, true);
  pers.persistent = true;
  const auto section = [&](const char* text, bool causal = true) {
    return persistent_causal_section(shape(text, causal), pers, h200.num_sms);
  };
  EXPECT_EQ(section("b=32,h=16,s=512,d=128"), 16);  // L2 bound 128: 1.14x the mean there
  EXPECT_EQ(section("b=16,h=16,s=1024,d=128"), 8);
  EXPECT_EQ(section("b=2,h=16,s=8192,d=128"), 1);
  EXPECT_EQ(section("b=1,h=16,s=16384,d=128"), 4);  // 128 blocks an entry: no section evens it
  EXPECT_EQ(section("b=2,h=16,s=8192,d=128", false), section_entries(4 << 20, kSectionEntriesAny));
  for (const char* text : {"b=32,h=16,s=512,d=128", "b=2,h=16,s=8192,d=128"}) {
    const AttentionEstimate e = estimate(shape(text, true), pers, h200);
    EXPECT_LT(e.persistent_imbalance, 1.05) << text;
    EXPECT_LT(e.predicted_us,
              estimate(shape(text, true), fa3_config(128, 128, 2, true), h200).predicted_us)
        << text;
  }
  EXPECT_GT(estimate(shape("b=1,h=16,s=16384,d=128", true), pers, h200).persistent_imbalance, 1.2);
  EXPECT_EQ(estimate(shape("b=2,h=16,s=8192,d=128", true), fa3_config(128, 128, 2, true), h200)
                .persistent_imbalance,
            0);

  // Persistent one-consumer CTAs sharing an SM (64 x 64 at d = 64, three an SM) ran 1.07-1.18x
  // the same tile launched one CTA a block at 1k-16k rows (H100,
  // bench/results/2026-12-05-h100-attention-forward-v12/): at 2048 rows of a full mask the model
  // ranks the persistent twin behind, and the persistent three-consumer tile ahead of both.
  const AttentionProblem d64 = shape("b=8,h=32,s=2048,d=64");
  AttentionConfig shared = fa3_config(64, 64, 2);
  const double one_cta_a_block = estimate(d64, shared, h200).predicted_us;
  shared.persistent = true;
  ASSERT_GT(estimate(d64, shared, h200).occupancy.ctas_per_sm, 1);
  EXPECT_GT(estimate(d64, shared, h200).predicted_us, one_cta_a_block);
  AttentionConfig three = fa3_config(192, 128, 2, true);
  three.persistent = true;
  EXPECT_LT(estimate(d64, three, h200).predicted_us, one_cta_a_block);
}

// The fa3 model is fit to the tuned H200 measurements of 2026-12-03
// (bench/results/2026-12-03-h200-attention-pingpong/measurements.csv): the d128 flagship
// bm128.bn128.s2.pp measured 614 TFLOP/s at N = 16384, ping-pong beat the same config without it
// by 5%, every fa3 config beat every fa2 config at d = 64 and 128 from N = 1024 on, three
// consumers won every d = 64 problem (measured while one consumer had a producer warpgroup), and
// the one-consumer 64 x 64 tile at d = 64 (106 registers) runs three CTAs per SM beside its
// one-warp producer.
// The work order of the fa3 persistent grid and the backward's CTAs (common/work_order.h): every
// (block, entry) once over the persistent CTAs' snakes; a section of 1 is blocks fastest, entry by
// entry; larger sections (the last one the rest) come one after another, each block by block with
// its entries fastest, so an entry's blocks come in ascending order (the backward's deterministic
// dQ order rests on it).
TEST(WorkOrder, SectionsVisitEachItemOnceBlockByBlockAndEntriesInOrder) {
  struct Case {
    int blocks, entries, section, grid;
  };
  for (const Case c : {Case{4, 512, 128, 132}, Case{4, 100, 32, 132}, Case{7, 45, 8, 64},
                       Case{1, 9, 4, 5}, Case{16, 3, 64, 7}, Case{5, 6, 1, 6}, Case{3, 10, 0, 4}}) {
    SCOPED_TRACE(::testing::Message() << "blocks " << c.blocks << " entries " << c.entries
                                      << " section " << c.section << " grid " << c.grid);
    const int items = c.blocks * c.entries;
    std::set<std::pair<int, int>> seen;
    for (int cta = 0; cta < c.grid; ++cta)
      for (int turn = 0;; ++turn) {
        const int index = snake_index(turn, cta, c.grid);
        if (index >= items) break;
        const WorkSlot s = sectioned_slot(index, c.blocks, c.entries, c.section);
        ASSERT_GE(s.block, 0);
        ASSERT_LT(s.block, c.blocks);
        ASSERT_GE(s.entry, 0);
        ASSERT_LT(s.entry, c.entries);
        EXPECT_TRUE(seen.insert({s.block, s.entry}).second) << "item twice at index " << index;
      }
    EXPECT_EQ(int(seen.size()), items);
    const int width = std::max(1, std::min(c.section, c.entries));
    std::vector<int> last_block(c.entries, -1);
    for (int index = 0; index < items; ++index) {
      const WorkSlot b = sectioned_slot(index, c.blocks, c.entries, c.section);
      EXPECT_EQ(b.block, last_block[b.entry] + 1) << "an entry's blocks in order, index " << index;
      last_block[b.entry] = b.block;
      if (width == 1) {
        EXPECT_EQ(b.block, index % c.blocks);
        EXPECT_EQ(b.entry, index / c.blocks);
      }
      if (index == 0) continue;
      const WorkSlot a = sectioned_slot(index - 1, c.blocks, c.entries, c.section);
      if (a.entry / width == b.entry / width) {
        EXPECT_TRUE(b.block > a.block || (b.block == a.block && b.entry == a.entry + 1))
            << "index " << index;
      } else {
        EXPECT_EQ(b.entry / width, a.entry / width + 1) << "sections in order, index " << index;
        EXPECT_EQ(a.block, c.blocks - 1);
        EXPECT_EQ(b.block, 0);
      }
    }
  }
  // A section holds the most entries, a power of two up to kSectionEntriesMax, whose shared bytes
  // fit the budget.
  EXPECT_EQ(section_entries(4 << 20), 8);  // 8192 keys x d128, BF16 K and V
  EXPECT_EQ(section_entries(3 << 20), 8);
  EXPECT_EQ(section_entries(kSectionBytes / 16), 16);
  EXPECT_EQ(section_entries(kSectionBytes), 1);
  EXPECT_EQ(section_entries(kSectionBytes * 4), 1);
  EXPECT_EQ(section_entries(256 << 10), kSectionEntriesMax);  // 512 keys x d128: 128 would fit
  EXPECT_EQ(section_entries(1), kSectionEntriesMax);
  EXPECT_EQ(section_entries(256 << 10, kSectionEntriesAny), 128);
  EXPECT_EQ(section_entries(1, kSectionEntriesAny), 1 << 25);
  // Attention's causal order: persistent CTAs take the L2 bound alone, one CTA a query block at
  // most kSectionEntriesMax entries.
  const AttentionProblem short_rows = shape("b=32,h=16,s=512,d=128", true);
  EXPECT_EQ(attention_causal_section(short_rows), kSectionEntriesMax);
  EXPECT_EQ(attention_l2_section(short_rows), 128);
  const AttentionProblem long_rows = shape("b=2,h=16,s=8192,d=128", true);
  EXPECT_EQ(attention_causal_section(long_rows), 8);
  EXPECT_EQ(attention_l2_section(long_rows), 8);
}

TEST(AttentionFa3, ModelFitsTheH200MeasurementsAndPrefersFa3OnHopper) {
  const DeviceDesc& h200 = device_profile("h200");
  const AttentionEstimate flagship =
      estimate(shape("b=1,h=16,s=16384,d=128"), fa3_config(128, 128, 2, true), h200);
  EXPECT_EQ(flagship.occupancy.ctas_per_sm, 1);
  EXPECT_EQ(flagship.threads, 384);
  EXPECT_EQ(flagship.regs_per_thread, 168);
  EXPECT_GT(flagship.predicted_tflops, 614 / 1.1);
  EXPECT_LT(flagship.predicted_tflops, 614 * 1.1);
  EXPECT_GT(estimate(shape("b=1,h=16,s=16384,d=128"), fa3_config(128, 128, 2), h200).predicted_us,
            flagship.predicted_us * 1.03);
  const AttentionEstimate narrow =
      estimate(shape("b=4,h=32,s=4096,d=64"), fa3_config(64, 64, 3), h200);
  EXPECT_EQ(narrow.threads, 160);
  EXPECT_EQ(narrow.occupancy.ctas_per_sm, 3);
  EXPECT_LT(narrow.regs_per_thread, 128);
  for (const char* dims : {"b=4,h=16,s=4096,d=128", "b=4,h=32,s=4096,d=64"})
    for (bool causal : {false, true}) {
      const AttentionProblem p = shape(dims, causal);
      const auto ranked = rank_by_model(p, enumerate_attention_configs(p, h200), h200);
      AttentionEstimate fa3, fa2;
      ASSERT_NE(best_of(ranked, AttentionFamily::kSm90, &fa3), nullptr);
      ASSERT_NE(best_of(ranked, AttentionFamily::kSm80, &fa2), nullptr);
      EXPECT_LT(fa3.predicted_us, fa2.predicted_us) << dims << " causal=" << causal;
      EXPECT_EQ(ranked.front().config.family, AttentionFamily::kSm90);
      // Measured before persistent CTAs and one consumer's one-warp producer: the tile among the
      // configs those left as they were.
      const auto launched = std::find_if(ranked.begin(), ranked.end(), [](const auto& r) {
        return !r.config.persistent && r.config.block_m > 64;
      });
      EXPECT_EQ(launched->config.block_m, p.head_dim == 64 ? 192 : 128) << dims;
    }
  // Causal skips the key blocks past the diagonal: about half the time at N = 4096.
  const double full =
      estimate(shape("b=4,h=16,s=4096,d=128"), fa3_config(128, 128, 3), h200).predicted_us;
  const double causal =
      estimate(shape("b=4,h=16,s=4096,d=128", true), fa3_config(128, 128, 3), h200).predicted_us;
  EXPECT_GT(causal, 0.45 * full);
  EXPECT_LT(causal, 0.6 * full);
  // The exp unit weighs more at smaller head dims, and one consumer warpgroup per SM sustains
  // less than two.
  EXPECT_LT(
      estimate(shape("b=1,h=32,s=16384,d=64"), fa3_config(128, 128, 3), h200).predicted_tflops,
      flagship.predicted_tflops);
  EXPECT_LT(
      estimate(shape("b=1,h=16,s=16384,d=128"), fa3_config(64, 128, 3), h200).predicted_tflops,
      flagship.predicted_tflops);
}

// fa2 on the H200 (bench/results/2026-12-06-h200-attention-forward-v12, b = 4, 32 heads, 4096
// full, d = 64): 128 rows in 4 warps of two row tiles 1653 µs with 64-key blocks and two stages,
// 1672 with one, 1886 with 32-key blocks; in 8 warps of one row tile 2836 (every warp reads the
// block's K and V, so twice the shared-memory bytes a FLOP). The model ranks them so, the best
// within 25%; it gives the 8 warps 1.17x the best's time of the 1.71x measured.
TEST(AttentionFa2, ModelChargesSharedMemoryReadsBlockOverheadAndOneStage) {
  const DeviceDesc& h200 = device_profile("h200");
  const AttentionProblem p = shape("b=4,h=32,s=4096,d=64");
  const auto us = [&](AttentionConfig c) { return estimate(p, c, h200).predicted_us; };
  const double best = us({128, 64, 4, 2});
  EXPECT_LT(best, us({128, 64, 4, 1}));
  EXPECT_LT(us({128, 64, 4, 1}), us({128, 32, 4, 2}));
  EXPECT_LT(us({128, 32, 4, 2}), us({128, 64, 8, 2}));
  EXPECT_NEAR(best / 1653.5, 1.0, 0.25) << best;
  EXPECT_GT(us({128, 64, 8, 2}), 1.15 * best);
}

}  // namespace
}  // namespace kt
