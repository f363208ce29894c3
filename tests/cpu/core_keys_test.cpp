// Problem keys ("gemm:IN:OUT:LAYOUT:MxNxK") and config keys ("sm80.bm..sk..") are the
// identities stored in the database: they must round-trip exactly over the whole search space,
// match their documented spelling, and reject every malformed key with a message naming why.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/gemm_small_m.hpp"
#include "core/types.hpp"

namespace {

// Runs `call`, which must throw kt::Error of kind kInvalidArgument whose message contains every
// string of `needles`.
void expect_invalid(const std::function<void()>& call, const std::vector<std::string>& needles) {
  try {
    call();
    ADD_FAILURE() << "no kt::Error was thrown";
  } catch (const kt::Error& e) {
    EXPECT_EQ(e.kind(), kt::ErrorKind::kInvalidArgument) << e.what();
    const std::string message = e.what();
    for (const auto& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos)
          << "message '" << message << "' does not mention '" << needle << "'";
  }
}

const kt::DType kAllDTypes[] = {kt::DType::kBF16, kt::DType::kFP16, kt::DType::kFP32};
const kt::DType kInputDTypes[] = {kt::DType::kBF16, kt::DType::kFP16};
const kt::Layout kAllLayouts[] = {kt::Layout::kNN, kt::Layout::kNT};

}  // namespace

TEST(DTypeAndLayout, SpellingsRoundTrip) {
  std::set<std::string_view> spellings;
  for (kt::DType d : kAllDTypes) {
    EXPECT_EQ(kt::parse_dtype(kt::to_string(d)), d);
    spellings.insert(kt::to_string(d));
  }
  for (kt::Layout l : kAllLayouts) {
    EXPECT_EQ(kt::parse_layout(kt::to_string(l)), l);
    spellings.insert(kt::to_string(l));
  }
  EXPECT_EQ(spellings.size(), 5u) << "two values share a spelling";
}

TEST(GemmProblemKey, GoldenString) {
  kt::GemmProblem p;
  p.m = 4096;
  p.n = 4096;
  p.k = 4096;
  p.in_dtype = kt::DType::kBF16;
  p.out_dtype = kt::DType::kBF16;
  p.layout = kt::Layout::kNT;
  EXPECT_EQ(kt::to_key(p), "gemm:bf16:bf16:nt:4096x4096x4096");

  // Field order is op:in:out:layout:MxNxK, so distinct values in every slot land in place.
  p.m = 1;
  p.n = 2;
  p.k = 3;
  p.in_dtype = kt::DType::kFP16;
  p.out_dtype = kt::DType::kFP32;
  p.layout = kt::Layout::kNN;
  EXPECT_EQ(kt::to_key(p), "gemm:fp16:fp32:nn:1x2x3");
}

TEST(GemmProblemKey, RoundTripsEveryDTypeLayoutAndShape) {
  // Shapes at the edges of the valid range: unit, ragged, square, and one operand at exactly
  // 2^31-1 elements (the largest 32-bit index space).
  const std::int64_t kMax32 = 2147483647;
  const std::int64_t shapes[][3] = {{1, 1, 1},        {127, 129, 65}, {4096, 4096, 4096},
                                    {16, 4096, 4096}, {kMax32, 1, 1}, {1, kMax32, 1},
                                    {1, 1, kMax32}};
  int checked = 0;
  for (kt::DType in : kInputDTypes)
    for (kt::DType out : kAllDTypes)
      for (kt::Layout layout : kAllLayouts)
        for (const auto& s : shapes) {
          kt::GemmProblem p;
          p.m = s[0];
          p.n = s[1];
          p.k = s[2];
          p.in_dtype = in;
          p.out_dtype = out;
          p.layout = layout;
          const std::string key = kt::to_key(p);
          const kt::GemmProblem parsed = kt::parse_gemm_key(key);
          EXPECT_EQ(parsed, p) << key;
          EXPECT_EQ(kt::to_key(parsed), key);
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 3 * 2 * 7);
}

TEST(GemmProblemKey, MalformedKeysThrowNamingTheProblem) {
  auto parse = [](std::string key) { return [key] { kt::parse_gemm_key(key); }; };
  // Wrong field count.
  expect_invalid(parse("gemm:bf16:bf16:4096x4096x4096"), {"not a GEMM problem key"});
  expect_invalid(parse("gemm:bf16:bf16:nt:64x64x64:extra"), {"not a GEMM problem key"});
  expect_invalid(parse(""), {"not a GEMM problem key"});
  // Wrong op prefix (case matters: keys are canonical).
  expect_invalid(parse("conv:bf16:bf16:nt:64x64x64"), {"not a GEMM problem key"});
  expect_invalid(parse("GEMM:bf16:bf16:nt:64x64x64"), {"not a GEMM problem key"});
  // Bad dtype or layout.
  expect_invalid(parse("gemm:int8:bf16:nt:64x64x64"), {"int8"});
  expect_invalid(parse("gemm:bf16:tf32:nt:64x64x64"), {"tf32"});
  expect_invalid(parse("gemm:bf16:bf16:tn:64x64x64"), {"tn"});
  // fp32 is an output dtype only.
  expect_invalid(parse("gemm:fp32:bf16:nt:64x64x64"), {"fp32"});
  // Bad shape: non-numeric, out of range, wrong arity.
  expect_invalid(parse("gemm:bf16:bf16:nt:64xABCx64"), {"N", "ABC"});
  expect_invalid(parse("gemm:bf16:bf16:nt:0x64x64"), {"M", "0"});
  expect_invalid(parse("gemm:bf16:bf16:nt:64x64x99999999999"), {"K", "99999999999"});
  expect_invalid(parse("gemm:bf16:bf16:nt:64x64"), {"MxNxK"});
}

TEST(GemmConfigKey, GoldenString) {
  kt::GemmConfig c;
  c.tile_m = 128;
  c.tile_n = 128;
  c.tile_k = 32;
  c.warp_m = 64;
  c.warp_n = 64;
  c.stages = 4;
  c.raster_group = 8;
  c.split_k = 1;
  EXPECT_EQ(kt::to_key(c), "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1");

  // Distinct values in every field: each lands behind its own prefix.
  const kt::GemmConfig d{kt::GemmFamily::kSm80, 256, 64, 64, 32, 16, 3, 1, 12};
  EXPECT_EQ(kt::to_key(d), "sm80.bm256.bn64.bk64.wm32.wn16.s3.g1.sk12");
  EXPECT_EQ(kt::parse_gemm_config_key("sm80.bm256.bn64.bk64.wm32.wn16.s3.g1.sk12"), d);
}

TEST(GemmConfigKey, RoundTripsEveryPointOfTheDomains) {
  // The whole cartesian product of GemmDomains, valid or not: the key is an identity for any
  // point the tuner may name.
  const kt::GemmDomains d;
  std::size_t expected = d.tile_m.size() * d.tile_n.size() * d.tile_k.size() * d.warp_m.size() *
                         d.warp_n.size() * d.stages.size() * d.raster_group.size() *
                         d.split_k.size();
  std::set<std::string> keys;
  for (int bm : d.tile_m)
    for (int bn : d.tile_n)
      for (int bk : d.tile_k)
        for (int wm : d.warp_m)
          for (int wn : d.warp_n)
            for (int s : d.stages)
              for (int g : d.raster_group)
                for (int sk : d.split_k) {
                  const kt::GemmConfig c{kt::GemmFamily::kSm80, bm, bn, bk, wm, wn, s, g, sk};
                  const std::string key = kt::to_key(c);
                  const kt::GemmConfig parsed = kt::parse_gemm_config_key(key);
                  ASSERT_EQ(parsed, c) << key;
                  ASSERT_EQ(kt::to_key(parsed), key);
                  keys.insert(key);
                }
  EXPECT_EQ(keys.size(), expected) << "two configs share a key";
}

TEST(GemmConfigKey, Sm90GoldenString) {
  const kt::GemmConfig c{kt::GemmFamily::kSm90, 128, 256, 64, 0, 0, 4, 8, 1, 2};
  EXPECT_EQ(kt::to_key(c), "sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1");
  // Distinct values in every field: each lands behind its own prefix.
  const kt::GemmConfig d{kt::GemmFamily::kSm90, 64, 192, 64, 0, 0, 5, 1, 3, 1, 4, 2};
  EXPECT_EQ(kt::to_key(d), "sm90.bm64.bn192.bk64.s5.c1.e4.cl2.g1.sk3");
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm64.bn192.bk64.s5.c1.e4.cl2.g1.sk3"), d);
}

TEST(GemmConfigKey, RoundTripsEveryPointOfTheSm90Domains) {
  const kt::GemmDomains d;
  const std::size_t expected = d.sm90_tile_m.size() * d.sm90_tile_n.size() * d.sm90_stages.size() *
                               d.sm90_consumers.size() * d.sm90_epilogue.size() *
                               d.sm90_cluster.size() * d.raster_group.size() * d.split_k.size();
  std::set<std::string> keys;
  for (int bm : d.sm90_tile_m)
    for (int bn : d.sm90_tile_n)
      for (int s : d.sm90_stages)
        for (int consumers : d.sm90_consumers)
          for (int e : d.sm90_epilogue)
            for (int cl : d.sm90_cluster)
              for (int g : d.raster_group)
                for (int sk : d.split_k) {
                  const kt::GemmConfig c{
                      kt::GemmFamily::kSm90, bm, bn, 64, 0, 0, s, g, sk, consumers, e, cl};
                  const std::string key = kt::to_key(c);
                  const kt::GemmConfig parsed = kt::parse_gemm_config_key(key);
                  ASSERT_EQ(parsed, c) << key;
                  ASSERT_EQ(kt::to_key(parsed), key);
                  keys.insert(key);
                }
  EXPECT_EQ(keys.size(), expected) << "two configs share a key";
}

// Pairs along N sharing A: cn2 stands where clN does.
TEST(GemmConfigKey, Sm90PairsAlongNRoundTrip) {
  kt::GemmConfig c{kt::GemmFamily::kSm90, 64, 32, 64, 0, 0, 12, 8, 1, 1, 0, 1};
  c.swap_ab = true;
  c.cluster_n = 2;
  EXPECT_EQ(kt::to_key(c), "sm90.bm64.bn32.bk64.s12.c1.e0.cn2.g8.sk1.swab");
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm64.bn32.bk64.s12.c1.e0.cn2.g8.sk1.swab"), c);
  // cn1 is cl1; only cl1 is canonical.
  expect_invalid([] { kt::parse_gemm_config_key("sm90.bm64.bn32.bk64.s12.c1.e0.cn1.g8.sk1"); },
                 {"not canonical", "cl1"});
  expect_invalid([] { kt::parse_gemm_config_key("sm90.bm64.bn32.bk64.s12.c1.e0.cnX.g8.sk1"); },
                 {"cn", "X"});
}

// Split-K with a tile's splits in one cluster: clkS stands where clN does.
TEST(GemmConfigKey, Sm90ClusterSplitsRoundTrip) {
  kt::GemmConfig c{kt::GemmFamily::kSm90, 128, 128, 64, 0, 0, 4, 8, 8, 2, 0, 1};
  c.cluster_k = 8;
  EXPECT_EQ(kt::to_key(c), "sm90.bm128.bn128.bk64.s4.c2.e0.clk8.g8.sk8");
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm128.bn128.bk64.s4.c2.e0.clk8.g8.sk8"), c);
  EXPECT_EQ(c.cluster, 1);
  EXPECT_EQ(c.cluster_k, 8);
  // cl1 and clk1 are the same config; only cl1 is canonical.
  expect_invalid([] { kt::parse_gemm_config_key("sm90.bm128.bn128.bk64.s4.c2.e0.clk1.g8.sk8"); },
                 {"not canonical", "cl1"});
  expect_invalid([] { kt::parse_gemm_config_key("sm90.bm128.bn128.bk64.s4.c2.e0.clkX.g8.sk8"); },
                 {"clk", "X"});
  expect_invalid([] { kt::parse_gemm_config_key("sm90.bm128.bn128.bk64.s4.c2.e0.clk0.g8.sk8"); },
                 {"'clk'", "out of range"});
}

// Swap-AB: a trailing ".swab"; anything else in that place is not a key.
TEST(GemmConfigKey, Sm90SwapAbRoundTrips) {
  kt::GemmConfig c{kt::GemmFamily::kSm90, 64, 16, 64, 0, 0, 12, 8, 2, 1, 0, 1};
  c.cluster_k = 2;
  c.swap_ab = true;
  EXPECT_EQ(kt::to_key(c), "sm90.bm64.bn16.bk64.s12.c1.e0.clk2.g8.sk2.swab");
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm64.bn16.bk64.s12.c1.e0.clk2.g8.sk2.swab"), c);
  c.swap_ab = false;
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm64.bn16.bk64.s12.c1.e0.clk2.g8.sk2"), c);
  expect_invalid([] { kt::parse_gemm_config_key("sm90.bm64.bn16.bk64.s12.c1.e0.cl1.g8.sk1.swap"); },
                 {"not a GEMM config key"});
  expect_invalid([] { kt::parse_gemm_config_key("sm80.bm64.bn64.bk32.wm32.wn32.s4.g8.sk1.swab"); },
                 {"not a GEMM config key"});
}

// Stream-K: a trailing ".st", distinct from the same config without it; not with swap-AB's
// suffix, and no other family has it.
TEST(GemmConfigKey, Sm90StreamKRoundTrips) {
  kt::GemmConfig c{kt::GemmFamily::kSm90, 128, 256, 64, 0, 0, 4, 8, 1, 2, 2, 1};
  c.stream_k = true;
  EXPECT_EQ(kt::to_key(c), "sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st");
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st"), c);
  c.stream_k = false;
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"), c);
  for (const char* key : {"sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st.swab",
                          "sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.stk"})
    expect_invalid([key] { kt::parse_gemm_config_key(key); }, {"not a GEMM config key"});
  expect_invalid([] { kt::parse_gemm_config_key("sm80.bm64.bn64.bk32.wm32.wn32.s4.g8.sk1.st"); },
                 {"not a GEMM config key"});
}

// Without warp specialization: a trailing ".nows", distinct from the same config with a producer
// warpgroup; not beside another suffix, and no other family has it.
TEST(GemmConfigKey, Sm90WithoutWarpSpecializationRoundTrips) {
  kt::GemmConfig c{kt::GemmFamily::kSm90, 128, 256, 64, 0, 0, 4, 8, 1, 2, 2, 1};
  c.warp_specialized = false;
  EXPECT_EQ(kt::to_key(c), "sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.nows");
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.nows"), c);
  EXPECT_EQ(c.num_threads(), 256);
  c.warp_specialized = true;
  EXPECT_EQ(kt::parse_gemm_config_key("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"), c);
  EXPECT_EQ(c.num_threads(), 384);
  for (const char* key : {"sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st.nows",
                          "sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.ws"})
    expect_invalid([key] { kt::parse_gemm_config_key(key); }, {"not a GEMM config key"});
  expect_invalid([] { kt::parse_gemm_config_key("sm80.bm64.bn64.bk32.wm32.wn32.s4.g8.sk1.nows"); },
                 {"not a GEMM config key"});
}

TEST(GemmConfigKey, MalformedSm90KeysThrowNamingTheProblem) {
  auto parse = [](std::string key) { return [key] { kt::parse_gemm_config_key(key); }; };
  // Wrong field count (the keys of template version 1 had no e and cl), or sm80 fields under
  // the sm90 family.
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.g8.sk1"), {"not a GEMM config key"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8"), {"not a GEMM config key"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1.x1"), {"not a GEMM config key"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.wm64.s4.c2.e0.cl1.g8.sk1"),
                 {"not a GEMM config key"});
  // Fields out of order: the message names the expected prefix.
  expect_invalid(parse("sm90.bm128.bn256.bk64.c2.s4.e0.cl1.g8.sk1"), {"'s'"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.g8.e0.cl1.c2.sk1"), {"'c'"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.cl1.e0.g8.sk1"), {"'e'"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.e0.g8.cl1.sk1"), {"'cl'"});
  // Non-numeric, out of range, not canonical.
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.cX.e0.cl1.g8.sk1"), {"c", "X"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c0.e0.cl1.g8.sk1"), {"'c'", "out of range"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.e9.cl1.g8.sk1"), {"'e'", "out of range"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.e0.cl0.g8.sk1"), {"'cl'", "out of range"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.eX.cl1.g8.sk1"), {"e", "X"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s04.c2.e0.cl1.g8.sk1"), {"not canonical"});
  expect_invalid(parse("sm90.bm128.bn256.bk64.s4.c2.e02.cl1.g8.sk1"), {"not canonical"});
}

TEST(GemmConfigKey, MalformedKeysThrowNamingTheProblem) {
  auto parse = [](std::string key) { return [key] { kt::parse_gemm_config_key(key); }; };
  // Wrong field count.
  expect_invalid(parse("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8"), {"not a GEMM config key"});
  expect_invalid(parse("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1.x1"), {"not a GEMM config key"});
  expect_invalid(parse(""), {"not a GEMM config key"});
  expect_invalid(parse("garbage"), {"garbage"});
  // Wrong family prefix.
  expect_invalid(parse("sm90.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1"), {"not a GEMM config key"});
  // Fields out of order: the message names the expected prefix.
  expect_invalid(parse("sm80.bn128.bm128.bk32.wm64.wn64.s4.g8.sk1"), {"bm"});
  expect_invalid(parse("sm80.bm128.bn128.bk32.wm64.wn64.g8.s4.sk1"), {"'s'"});
  // Non-numeric values.
  expect_invalid(parse("sm80.bmXL.bn128.bk32.wm64.wn64.s4.g8.sk1"), {"bm", "XL"});
  expect_invalid(parse("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk"), {"sk", "empty"});
  expect_invalid(parse("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1x"), {"sk", "1x"});
  // Out of range: zero, negative, too large, beyond int64.
  expect_invalid(parse("sm80.bm0.bn128.bk32.wm64.wn64.s4.g8.sk1"), {"bm", "out of range"});
  expect_invalid(parse("sm80.bm128.bn-128.bk32.wm64.wn64.s4.g8.sk1"), {"bn", "out of range"});
  expect_invalid(parse("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk100000"), {"sk", "out of range"});
  expect_invalid(parse("sm80.bm128.bn128.bk99999999999999999999.wm64.wn64.s4.g8.sk1"),
                 {"bk", "out of range"});
}

TEST(GemmConfigKey, SmallMGoldenString) {
  const kt::GemmConfig c = kt::small_m_config(16, 128, 64, 64, 4);
  EXPECT_EQ(kt::to_key(c), "smallm.bm16.bn128.bk64.wn64.wk4.sk1");
  // Distinct values in every field: each lands behind its own prefix.
  const kt::GemmConfig d = kt::small_m_config(64, 32, 128, 16, 2, 3);
  EXPECT_EQ(kt::to_key(d), "smallm.bm64.bn32.bk128.wn16.wk2.sk3");
  EXPECT_EQ(kt::parse_gemm_config_key("smallm.bm64.bn32.bk128.wn16.wk2.sk3"), d);
  EXPECT_EQ(d.family, kt::GemmFamily::kSmallM);
  EXPECT_EQ(d.num_warps(), 2 * 2);
}

TEST(GemmConfigKey, RoundTripsEveryPointOfTheSmallMDomains) {
  const kt::GemmDomains d;
  const std::size_t expected = d.small_m_tile_m.size() * d.small_m_warp_n.size() *
                               d.small_m_warps_n.size() * d.small_m_warps_k.size() *
                               d.small_m_tile_k.size() * d.split_k.size();
  std::set<std::string> keys;
  for (int bm : d.small_m_tile_m)
    for (int wn : d.small_m_warp_n)
      for (int warps_n : d.small_m_warps_n)
        for (int wk : d.small_m_warps_k)
          for (int bk : d.small_m_tile_k)
            for (int sk : d.split_k) {
              const kt::GemmConfig c = kt::small_m_config(bm, wn * warps_n, bk, wn, wk, sk);
              const std::string key = kt::to_key(c);
              const kt::GemmConfig parsed = kt::parse_gemm_config_key(key);
              ASSERT_EQ(parsed, c) << key;
              ASSERT_EQ(kt::to_key(parsed), key);
              keys.insert(key);
            }
  EXPECT_EQ(keys.size(), expected) << "two configs share a key";
}

TEST(GemmConfigKey, MalformedSmallMKeysThrowNamingTheProblem) {
  auto parse = [](std::string key) { return [key] { kt::parse_gemm_config_key(key); }; };
  expect_invalid(parse("smallm.bm16.bn128.bk64.wn64.wk4"), {"not a GEMM config key"});
  expect_invalid(parse("smallm.bm16.bn128.bk64.wn64.wk4.sk1.x1"), {"not a GEMM config key"});
  expect_invalid(parse("smallm.bm16.bn128.bk64.wk4.wn64.sk1"), {"'wn'"});
  expect_invalid(parse("smallm.bm16.bn128.bk64.wn64.wkX.sk1"), {"wk", "X"});
  expect_invalid(parse("smallm.bm16.bn128.bk64.wn64.wk0.sk1"), {"'wk'", "out of range"});
  expect_invalid(parse("smallm.bm16.bn128.bk064.wn64.wk4.sk1"), {"not canonical"});
}
