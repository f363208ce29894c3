// Attention backward through the op registry without a GPU: keys of both families and their
// errors, the shape syntax with both flags, head_dims refused with a reason, validate()'s reasons
// (fa3's register, shared-memory and dQ budgets), the space, the workspace (one size for every
// config), launch plans and name expressions, the model's ranking and FLOP count, neighbour
// distances, and `kerntune explain` as a subprocess.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <utility>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "ops/attention_backward/attention_backward_config.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/cli_runner.hpp"

namespace kt {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

AttentionBackwardProblem shape(const char* text, bool causal = false, bool det = false) {
  AttentionBackwardProblem p;
  p.causal = causal;
  p.deterministic = det;
  parse_attention_backward_shape(text, p);
  return p;
}

TEST(AttentionBackwardKeys, GoldenStringsAndRoundTrips) {
  const AttentionBackwardProblem p = shape("b=4,hq=32,hkv=8,sq=4096,sk=2048,d=128", true, true);
  EXPECT_EQ(to_key(p), "attnbwd:bf16:b4.hq32.hkv8.sq4096.sk2048.d128.causal.det");
  EXPECT_EQ(parse_attention_backward_key(to_key(p)), p);
  AttentionBackwardProblem q = shape("b=1,h=2,s=127,d=64");
  q.dtype = DType::kFP16;
  EXPECT_EQ(to_key(q), "attnbwd:fp16:b1.hq2.hkv2.sq127.sk127.d64.full");
  EXPECT_EQ(parse_attention_backward_key(to_key(q)), q);
  EXPECT_EQ(q.forward().seqlen_k, 127);
  const AttentionBackwardConfig c{32, 128, 8, 1};
  EXPECT_EQ(to_key(c), "fa2.bm32.bn128.w8.s1");
  EXPECT_EQ(parse_attention_backward_config_key(to_key(c)), c);
  const AttentionBackwardConfig f{64, 128, 0, 2, AttentionFamily::kSm90};
  EXPECT_EQ(to_key(f), "fa3.bm64.bn128.s2");
  EXPECT_EQ(parse_attention_backward_config_key(to_key(f)), f);
  EXPECT_EQ(f.num_consumers(128), 2);
  EXPECT_EQ(f.num_threads(128), 384);
  // At head_dim 256 two consumers share 64 keys.
  const AttentionBackwardConfig wide{64, 64, 0, 2, AttentionFamily::kSm90};
  EXPECT_EQ(wide.num_consumers(64), 1);
  EXPECT_EQ(wide.num_consumers(256), 2);
  EXPECT_EQ(wide.num_threads(256), 384);
  // Where fa3 stages dQ follows from head_dim (over the step's Q and dO at 256): no key names it.
  EXPECT_EQ(to_key(wide), "fa3.bm64.bn64.s2");
  EXPECT_EQ(parse_attention_backward_config_key("fa3.bm64.bn64.s2"), wide);
}

TEST(AttentionBackwardKeys, RefuseMalformedKeysNamingTheProblem) {
  EXPECT_NE(error_of([] {
              parse_attention_backward_key("attn:bf16:b1.hq1.hkv1.sq1.sk1.d64.full");
            }).find("not an attention backward problem key"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_key("attnbwd:bf16:b1.hq1.hkv1.sq1.sk1.d64.full.fast");
            }).find("expected attnbwd"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_key("attnbwd:bf16:b01.hq1.hkv1.sq1.sk1.d64.full");
            }).find("not canonical"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_key("attnbwd:bf16:b1.hq1.hkv1.sq1.sk1.d64.masked");
            }).find("'causal' or 'full'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_config_key("fa2.bm64.bn64.w4");
            }).find("fa2.bm64.bn64.w4.s2"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_config_key("fa2.bm64.bn64.w04.s2");
            }).find("not canonical"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_config_key("fa3.bm64.bn64.w4.s2");
            }).find("not an attention backward config key"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_config_key("fa3.bm64.bn64.x2");
            }).find("should start with 's'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_config_key("fa3.bm64.bn64.s2.dq");
            }).find("not an attention backward config key"),
            std::string::npos);
  // The ".dqr" suffix of template version 5 keys: refused with the key to write instead.
  const std::string dqr =
      error_of([] { parse_attention_backward_config_key("fa3.bm64.bn64.s2.dqr"); });
  EXPECT_NE(dqr.find("no .dqr suffix"), std::string::npos) << dqr;
  EXPECT_NE(dqr.find("head_dim decides"), std::string::npos) << dqr;
  EXPECT_NE(dqr.find("write 'fa3.bm64.bn64.s2'"), std::string::npos) << dqr;
  EXPECT_NE(error_of([] {
              parse_attention_backward_config_key("fa2.bm64.bn64.w4.s2.dqr");
            }).find("not an attention backward config key"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_attention_backward_config_key("fa4.bm64.bn64.s2");
            }).find("fa3.bm64.bn128.s2"),
            std::string::npos);
}

TEST(AttentionBackwardShape, TakesBothFlagsAndNamesTheBadField) {
  const OpSpec& op = op_spec("attention-backward");
  ShapeOptions o;
  EXPECT_EQ(op.problem_key("b=2,h=4,sq=100,sk=300,d=128", o),
            "attnbwd:bf16:b2.hq4.hkv4.sq100.sk300.d128.full");
  o.flags = {"deterministic", "causal"};
  EXPECT_EQ(op.problem_key("b=1,hq=8,hkv=1,s=77,d=64", o),
            "attnbwd:bf16:b1.hq8.hkv1.sq77.sk77.d64.causal.det");
  ShapeOptions residual;
  residual.flags = {"residual"};
  EXPECT_NE(error_of([&] { op.problem_key("b=1,h=1,s=1,d=64", residual); }).find("--residual"),
            std::string::npos);
  const ShapeOptions none;
  EXPECT_NE(error_of([&] { op.problem_key("b=1,h=1,s=1", none); }).find("head dimension"),
            std::string::npos);
  EXPECT_NE(error_of([&] { op.problem_key("b=1,hq=6,hkv=4,s=1,d=64", none); }).find("multiple"),
            std::string::npos);
  EXPECT_NE(error_of([&] { op.problem_key("b=1,h=1,s=1,d=64,x=3", none); }).find("'x'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              op.problem_key("b=4,h=8,sq=1000,tq=2500,d=128", none);
            }).find("dense batches only"),
            std::string::npos);
}

TEST(AttentionBackwardShape, TakesEveryForwardHeadDimAndNamesOthers) {
  for (std::int64_t d : {64, 96, 128, 256})
    EXPECT_EQ(shape(fmt::format("b=1,h=2,s=64,d={}", d).c_str()).head_dim, d);
  const std::string d32 = error_of([] { shape("b=1,h=2,s=64,d=32"); });
  EXPECT_NE(d32.find("head_dim = 32 is not supported"), std::string::npos) << d32;
  EXPECT_NE(d32.find("expected 64, 96, 128 or 256"), std::string::npos) << d32;
  // A key is validated as the op's own.
  EXPECT_NE(error_of([] {
              parse_attention_backward_key("attnbwd:bf16:b1.hq1.hkv1.sq1.sk1.d32.full");
            }).find("expected 64, 96, 128 or 256"),
            std::string::npos);
  EXPECT_NE(error_of([] { shape("b=1,h=2,s=64,d=0"); }).find(">= 1"), std::string::npos);
  EXPECT_NE(error_of([] { shape("b=65536,h=256,s=65536,d=64"); }).find("exceeds 2^31-1"),
            std::string::npos);
}

TEST(AttentionBackwardValidate, NamesWhatDoesNotFit) {
  const DeviceDesc& h200 = device_profile("h200");
  const AttentionBackwardProblem d128 = shape("b=1,h=2,s=1000,d=128");
  const AttentionBackwardProblem d64 = shape("b=1,h=2,s=1000,d=64");
  const auto why = [&](const AttentionBackwardProblem& p, AttentionBackwardConfig c,
                       const DeviceDesc& d) { return validate(p, c, d).value_or(""); };
  EXPECT_NE(why(d128, {64, 128, 4, 2}, h200).find("32 keys a warp at 128 head_dim columns"),
            std::string::npos);
  EXPECT_EQ(why(d64, {64, 128, 4, 2}, h200), "");  // 32 keys a warp fit at head_dim 64
  EXPECT_NE(why(d64, {64, 96, 4, 2}, h200).find("16 or 32 x warps"), std::string::npos);
  EXPECT_NE(why(d64, {64, 64, 2, 2}, h200).find("warps must be 4 or 8"), std::string::npos);
  EXPECT_NE(why(d64, {16, 64, 4, 2}, h200).find("block_m"), std::string::npos);
  EXPECT_NE(why(d64, {64, 64, 4, 3}, h200).find("stages"), std::string::npos);
  // 64 + 128 + 32 + 2 KB of shared memory: an H200 holds it, an A100 does not.
  EXPECT_EQ(why(d128, {128, 128, 8, 2}, h200), "");
  EXPECT_NE(why(d128, {128, 128, 8, 2}, device_profile("a100")).find("shared memory"),
            std::string::npos);
  DeviceDesc turing = h200;
  turing.cc_major = 7;
  EXPECT_NE(why(d64, {64, 64, 4, 2}, turing).find("compute capability"), std::string::npos);
}

TEST(AttentionBackwardValidate, Fa3NamesItsRegisterSharedMemoryAndDqBudgets) {
  const DeviceDesc& h200 = device_profile("h200");
  const AttentionBackwardProblem d128 = shape("b=1,h=2,s=1000,d=128");
  const AttentionBackwardProblem d64 = shape("b=1,h=2,s=1000,d=64");
  const auto fa3 = [](int bm, int bn, int s) {
    return AttentionBackwardConfig{bm, bn, 0, s, AttentionFamily::kSm90};
  };
  const auto why = [&](const AttentionBackwardProblem& p, AttentionBackwardConfig c,
                       const DeviceDesc& d) { return validate(p, c, d).value_or(""); };
  EXPECT_EQ(why(d128, fa3(64, 128, 2), h200), "");
  EXPECT_EQ(why(d64, fa3(128, 128, 2), h200), "");
  // dK, dV, Sᵀ and dPᵀ: 128 + 128 FP32 a consumer thread.
  const std::string registers = why(d128, fa3(128, 64, 2), h200);
  EXPECT_NE(registers.find("256 FP32 accumulators"), std::string::npos) << registers;
  EXPECT_NE(registers.find("208 of its 240 registers"), std::string::npos) << registers;
  // Two K/V tiles of 32 KB, three stages of 32 KB, two dS tiles of 16 KB, 32 KB of dQ: over 227.
  const std::string smem = why(d128, fa3(64, 128, 3), h200);
  EXPECT_NE(smem.find("shared memory"), std::string::npos) << smem;
  EXPECT_EQ(smem_bytes(d128, fa3(64, 128, 2)),
            1024 + 2 * 32768 + 2 * 32768 + 2 * 16384 + 32768 + 2 * 2 * (64 + 32) * 4 + 128);
  const std::string dq = why(d64, fa3(64, 128, 2), h200);
  EXPECT_NE(dq.find("64-row tiles or 64-column slabs"), std::string::npos) << dq;
  // Below head_dim 256 the layout always holds the dQ staging (the third stage would fit
  // without it): dQ is added by TMA reductions there, head_dim decides.
  EXPECT_EQ(smem_bytes(d128, fa3(64, 128, 3)),
            1024 + 2 * 32768 + 3 * 2 * 16384 + 2 * 16384 + 32768 + 3 * 2 * (64 + 32) * 4 + 128);
  const std::string tma = explain_config(d128, fa3(64, 128, 2), h200);
  EXPECT_NE(tma.find("elements added by TMA reductions"), std::string::npos) << tma;
  EXPECT_NE(why(d64, fa3(64, 64, 2), device_profile("a100")).find("sm_90a"), std::string::npos);
  EXPECT_NE(why(d64, {64, 64, 4, 2, AttentionFamily::kSm90}, h200).find("no warps field"),
            std::string::npos);
  EXPECT_NE(why(d64, fa3(64, 192, 2), h200).find("block_n"), std::string::npos);
  EXPECT_NE(why(d64, fa3(32, 64, 2), h200).find("block_m"), std::string::npos);
  EXPECT_NE(why(d64, fa3(64, 64, 1), h200).find("stages"), std::string::npos);
}

// head_dim 256, fa2: two CTAs a key block (a head_dim half each: the grid's z or, ordered, its x
// doubles, and so do the semaphores), block_m at most 64 (32 ordered) for registers, and a model
// that counts Sᵀ and dPᵀ twice: 1.4x the FLOPs of 10 · pairs · d.
TEST(AttentionBackwardSpace, HeadDim256SplitsItsColumnsBetweenTwoCtasAKeyBlock) {
  const DeviceDesc& h200 = device_profile("h200");
  const auto why = [&](const AttentionBackwardProblem& p, AttentionBackwardConfig c) {
    return validate(p, c, h200).value_or("");
  };
  const AttentionBackwardProblem p = shape("b=3,hq=8,hkv=2,sq=777,sk=1000,d=256");
  const AttentionBackwardProblem ordered = shape("b=3,hq=8,hkv=2,sq=777,sk=1000,d=256", true, true);
  const AttentionBackwardConfig c{64, 128, 8, 1};
  EXPECT_EQ(why(p, c), "");
  EXPECT_EQ(why(p, {32, 64, 4, 2}), "");
  EXPECT_NE(why(p, {64, 64, 4, 1}).find("block_m <= 32 with 4 warps"), std::string::npos);
  EXPECT_NE(why(p, {128, 128, 8, 1}).find("block_m <= 64 with 8 warps"), std::string::npos);
  EXPECT_NE(why(ordered, {64, 128, 8, 1}).find("block_m <= 32 with 8 warps when deterministic"),
            std::string::npos);
  EXPECT_EQ(why(ordered, {32, 64, 4, 2}), "");
  EXPECT_NE(why(p, {64, 128, 4, 2}).find("32 keys a warp at 128 head_dim columns"),
            std::string::npos);
  const std::int64_t n_blocks = (1000 + 127) / 128;
  EXPECT_EQ(plan_launch(p, c).main.grid,
            (std::array<std::uint32_t, 3>{std::uint32_t(n_blocks), 2, 3 * 2}));
  EXPECT_EQ(plan_launch(ordered, AttentionBackwardConfig{32, 64, 4, 2}).main.grid,
            (std::array<std::uint32_t, 3>{std::uint32_t(2 * n_blocks * 2 * 3 * 2), 1, 1}));
  const AttentionBackwardWorkspace w = attention_backward_workspace(ordered);
  EXPECT_GE(w.bytes - w.semaphores_offset, (1 + 3 * 8 * ((777 + 31) / 32) * 2) * 4);
  EXPECT_EQ(num_ctas(p, c), n_blocks * 2 * 3 * 2);
  EXPECT_NE(
      attention_backward_kernel_expressions(p, c)[0].find("kt::attention_bwd_sm80<kt::bf16, 256,"),
      std::string::npos);
  // Twice the CTAs, each with 1.4x the FLOPs of a d128 CTA: about 2.8x d128's time where the
  // SMs are full (one CTA of 8 warps an SM at both head_dims).
  const AttentionBackwardProblem big = shape("b=4,h=16,s=4096,d=256");
  const AttentionBackwardProblem big_half = shape("b=4,h=16,s=4096,d=128");
  const AttentionBackwardConfig wide{64, 128, 8, 1};
  const double ratio =
      estimate(big, wide, h200).compute_us / estimate(big_half, wide, h200).compute_us;
  EXPECT_GT(ratio, 2.4);
  EXPECT_LT(ratio, 2.9);
  EXPECT_FALSE(enumerate_attention_backward_configs(p, h200).empty());
  EXPECT_FALSE(enumerate_attention_backward_configs(ordered, h200).empty());
  EXPECT_FALSE(enumerate_attention_backward_configs(p, device_profile("a100")).empty());
}

// head_dim 256, fa3: one CTA a key block of 64, its two consumer warpgroups sharing the keys with
// 128 columns of dK and dV each and Sᵀ, dPᵀ of half the step's 64 queries, dQ staged over the
// step's Q and dO tiles (no staging of its own in shared memory: two stages of 64-row Q and dO
// tiles, K and V, the step's P and dS tiles); a CTA's step costs the 10 · 64 · 64 · 256 FLOPs of
// its five products, none computed twice.
TEST(AttentionBackwardSpace, HeadDim256Fa3SharesAKeyBlockBetweenTwoConsumers) {
  const DeviceDesc& h200 = device_profile("h200");
  const auto why = [&](const AttentionBackwardProblem& p, AttentionBackwardConfig c) {
    return validate(p, c, h200).value_or("");
  };
  const auto fa3 = [](int bm, int bn, int s) {
    return AttentionBackwardConfig{bm, bn, 0, s, AttentionFamily::kSm90};
  };
  for (bool deterministic : {false, true}) {
    const AttentionBackwardProblem p =
        shape("b=3,hq=8,hkv=2,sq=777,sk=1000,d=256", true, deterministic);
    AttentionBackwardDomains fa3_only;
    fa3_only.families = {AttentionFamily::kSm90};
    const auto space = enumerate_attention_backward_configs(p, h200, fa3_only);
    ASSERT_EQ(space.size(), 1u) << to_key(p);
    EXPECT_EQ(space.front(), fa3(64, 64, 2));
    EXPECT_EQ(smem_bytes(p, space.front()),
              1024 + 2 * 32768 + 2 * 2 * 32768 + 2 * 8192 + 2 * 2 * (64 + 32) * 4 + 128);
    const std::int64_t n_blocks = (1000 + 63) / 64;
    EXPECT_EQ(num_ctas(p, space.front()), n_blocks * 2 * 3);
    const AttentionBackwardLaunch plan = plan_launch(p, space.front());
    EXPECT_EQ(plan.main.block[0], 384u);
    EXPECT_EQ(plan.main.grid[0] * plan.main.grid[1] * plan.main.grid[2],
              std::uint32_t(n_blocks * 2 * 3));
    EXPECT_EQ(attention_backward_kernel_expressions(p, space.front())[0],
              fmt::format("kt::attention_bwd_sm90<kt::bf16, 256, 64, 64, 2, true, {}>",
                          deterministic ? "true" : "false"));
  }
  const AttentionBackwardProblem p = shape("b=3,hq=8,hkv=2,sq=777,sk=1000,d=256");
  EXPECT_NE(why(p, fa3(64, 128, 2)).find("needs block_n 64"), std::string::npos);
  EXPECT_NE(why(p, fa3(128, 64, 2)).find("shared memory"), std::string::npos);
  EXPECT_NE(why(p, fa3(64, 64, 3)).find("shared memory"), std::string::npos);
  // Each part's Sᵀ and dPᵀ cover half the step's query rows: the problem's FLOPs, once.
  const AttentionBackwardProblem big = shape("b=4,h=16,s=4096,d=256");
  EXPECT_EQ(to_key(fa3(64, 64, 2)), "fa3.bm64.bn64.s2");
  const std::string explain = explain_config(big, fa3(64, 64, 2), h200);
  EXPECT_NE(explain.find("2 consumer warpgroups sharing 64 keys, 2 head_dim parts of 128 columns"),
            std::string::npos)
      << explain;
  EXPECT_NE(explain.find("Sᵀ and dPᵀ of 32 of the step's query rows"), std::string::npos)
      << explain;
  EXPECT_NE(explain.find("staged over the step's Q and dO tiles and added by TMA reductions"),
            std::string::npos)
      << explain;
  EXPECT_GT(estimate(big, fa3(64, 64, 2), h200).predicted_us,
            big.flops() / (h200.wgmma_tflops * 1e12) * 1e6);
}

// head_dim 96 (fa2 only): 12 chunks a row; a warp's dQ columns must be whole 16-column pairs
// (96 split in 4 is not), and the row kernels give each row a group of 16 lanes, 12 of them busy.
TEST(AttentionBackwardSpace, HeadDim96NeedsWholeColumnPairsForDq) {
  const DeviceDesc& h200 = device_profile("h200");
  const AttentionBackwardProblem p = shape("b=3,hq=8,hkv=2,sq=777,sk=1000,d=96", true);
  EXPECT_EQ(validate(p, {64, 64, 4, 2}, h200), std::nullopt);
  EXPECT_EQ(validate(p, {64, 128, 8, 2}, h200), std::nullopt);
  EXPECT_NE(validate(p, {32, 128, 8, 2}, h200).value_or("").find("a warp 24 columns"),
            std::string::npos);
  EXPECT_NE(validate(p, {64, 64, 0, 2, AttentionFamily::kSm90}, h200)
                .value_or("")
                .find("head_dim 64, 128 or 256"),
            std::string::npos);
  const AttentionBackwardLaunch plan = plan_launch(p, {64, 64, 4, 2});
  EXPECT_EQ(plan.preprocess.grid[0], std::uint32_t((3 * 8 * 777 + 7) / 8));
  EXPECT_EQ(plan.main.grid[2], 3u);
  EXPECT_FALSE(enumerate_attention_backward_configs(p, h200).empty());
}

TEST(AttentionBackwardSpace, EveryEnumeratedConfigValidatesAndFitsItsLaunch) {
  const DeviceDesc& h200 = device_profile("h200");
  for (const char* text : {"b=2,hq=8,hkv=2,s=1000,d=128", "b=3,h=4,sq=127,sk=999,d=64"}) {
    for (bool det : {false, true}) {
      const AttentionBackwardProblem p = shape(text, true, det);
      const auto configs = enumerate_attention_backward_configs(p, h200);
      // fa2, then fa3: d64 {64, 64}, {128, 64} x stages 2, 3 and {128, 128} s2; d128 {64, 64}
      // x stages 2, 3, {64, 128} s2 and {80, 128} s2 (dQ transposed). The causal mask's
      // registers leave out one of fa2's d64 configs (128 queries, 128 keys, 4 warps, 2 stages),
      // deterministic mode's six.
      EXPECT_EQ(configs.size(), p.head_dim == 64 ? (det ? 12u : 17u) + 5u : 12u + 4u) << text;
      std::set<std::int64_t> workspaces;
      for (const AttentionBackwardConfig& c : configs) {
        SCOPED_TRACE(to_key(c));
        EXPECT_FALSE(validate(p, c, h200));
        EXPECT_LE(estimated_registers(p, c), 255);
        const AttentionBackwardLaunch plan = plan_launch(p, c);
        const std::int64_t n_blocks = (p.seqlen_k + c.block_n - 1) / c.block_n;
        EXPECT_EQ(plan.main.num_ctas(), n_blocks * p.heads_kv * p.batch);
        EXPECT_EQ(plan.main.grid[1], det ? 1u : std::uint32_t(p.heads_kv));
        EXPECT_EQ(plan.main.block[0], c.family == AttentionFamily::kSm90
                                          ? std::uint32_t(128 * (c.block_n / 64 + 1))
                                          : std::uint32_t(32 * c.warps));
        EXPECT_EQ(plan.main.smem_bytes, std::uint32_t(smem_bytes(p, c)));
        EXPECT_LE(smem_bytes(p, c), h200.max_smem_per_block_optin_bytes);
        // Preprocess and convert: 128 threads, a row per head_dim / 8 of them.
        const std::int64_t rows_per_cta = 128 / (p.head_dim / 8);
        EXPECT_EQ(
            plan.preprocess.grid[0],
            std::uint32_t((p.batch * p.heads_q * p.seqlen_q + rows_per_cta - 1) / rows_per_cta));
        EXPECT_EQ(plan.preprocess.block[0], 128u);
        EXPECT_EQ(plan.convert.grid, plan.preprocess.grid);
        workspaces.insert(
            op_spec("attention-backward").workspace_bytes(to_key(p), to_key(c), h200));
      }
      // One workspace for every config (the runtime grants a problem's, whichever it picks).
      ASSERT_EQ(workspaces.size(), 1u);
      const AttentionBackwardWorkspace w = attention_backward_workspace(p);
      EXPECT_EQ(*workspaces.begin(), w.bytes);
      const std::int64_t rows = p.batch * p.heads_q * p.seqlen_q;
      EXPECT_GE(w.d_rows_offset, rows * p.head_dim * 4);
      EXPECT_EQ(w.d_rows_offset % 256, 0);
      EXPECT_GE(w.lse_log2_offset, w.d_rows_offset + rows * 4);
      EXPECT_EQ(w.lse_log2_offset % 256, 0);
      EXPECT_GE(w.semaphores_offset, w.lse_log2_offset + rows * 4);
      const std::int64_t semaphores = det ? 1 + p.batch * p.heads_q * ((p.seqlen_q + 31) / 32) : 0;
      EXPECT_GE(w.bytes, w.semaphores_offset + semaphores * 4);
      EXPECT_LT(w.bytes, w.semaphores_offset + semaphores * 4 + 256);
    }
  }
  // An A100 fits fewer fa2 configs (its 163 KB of shared memory), never none, and no fa3.
  const AttentionBackwardProblem p = shape("b=1,h=2,s=1000,d=128");
  const auto a100 = enumerate_attention_backward_configs(p, device_profile("a100"));
  EXPECT_FALSE(a100.empty());
  EXPECT_LT(a100.size(), 12u);
  for (const AttentionBackwardConfig& c : a100) EXPECT_EQ(c.family, AttentionFamily::kSm80);
}

// The scratch a problem cannot run without is granted beyond the runtime's and the tuner's cap;
// the cap still bounds what a config may choose (GEMM's split-K needs none to run).
TEST(AttentionBackwardWorkspace, TheProblemsScratchIsGrantedBeyondTheCap) {
  const DeviceDesc& h200 = device_profile("h200");
  const OpSpec& bwd = op_spec("attention-backward");
  // 16k tokens x 16 heads x d128: a 128 MiB FP32 dQ accumulator, over the default 64 MiB.
  const std::string big = "attnbwd:bf16:b4.hq16.hkv16.sq4096.sk4096.d128.causal";
  const std::int64_t needed = attention_backward_workspace(parse_attention_backward_key(big)).bytes;
  EXPECT_GT(needed, std::int64_t(128) << 20);
  EXPECT_EQ(bwd.required_workspace_bytes(big, h200), needed);
  EXPECT_EQ(rt::workspace_cap_for(bwd, big, h200, std::int64_t(64) << 20), needed);
  EXPECT_EQ(rt::workspace_cap_for(bwd, big, h200, std::int64_t(1) << 30), std::int64_t(1) << 30);
  // Every config fits the granted cap, so dispatch always finds one.
  EXPECT_EQ(rt::model_ranked_configs(bwd, big, h200, needed, 100).size(), 16u);
  const OpSpec& gemm = op_spec("gemm");
  EXPECT_EQ(gemm.required_workspace_bytes("gemm:bf16:bf16:nt:512x512x32768", h200), 0);
  EXPECT_EQ(rt::workspace_cap_for(gemm, "gemm:bf16:bf16:nt:512x512x32768", h200, 4096), 4096);
}

TEST(AttentionBackwardSource, NamesThreeKernelsMainFirst) {
  const OpSpec& op = op_spec("attention-backward");
  const std::string key = "attnbwd:fp16:b2.hq8.hkv2.sq100.sk300.d64.causal.det";
  const KernelSource s = op.kernel_source(key, "fa2.bm64.bn128.w8.s2", "");
  EXPECT_EQ(s.headers,
            std::vector<std::string>{"kerntune/attention_backward/attention_bwd_sm80.cuh"});
  ASSERT_EQ(s.name_expressions.size(), 3u);
  EXPECT_EQ(s.name_expressions[0],
            "kt::attention_bwd_sm80<kt::fp16, 64, 64, 128, 8, 2, true, true>");
  EXPECT_EQ(s.name_expressions[1], "kt::attention_bwd_preprocess<kt::fp16, 64, 64, true>");
  EXPECT_EQ(s.name_expressions[2], "kt::attention_bwd_convert_dq<kt::fp16, 64>");
  EXPECT_NE(error_of([&] { op.kernel_source(key, "fa2.bm64.bn128.w8.s2", "lse"); }).find("lse"),
            std::string::npos);
  const KernelSource f = op.kernel_source(key, "fa3.bm128.bn128.s2", "");
  EXPECT_EQ(f.headers,
            std::vector<std::string>{"kerntune/attention_backward/attention_bwd_sm90.cuh"});
  ASSERT_EQ(f.name_expressions.size(), 3u);
  EXPECT_EQ(f.name_expressions[0], "kt::attention_bwd_sm90<kt::fp16, 64, 128, 128, 2, true, true>");
  EXPECT_NE(
      error_of([&] { op.kernel_source(key, "fa3.bm128.bn128.s2.dqr", ""); }).find("no .dqr suffix"),
      std::string::npos);
  EXPECT_EQ(f.name_expressions[1], "kt::attention_bwd_preprocess<kt::fp16, 64, 128, true>");
  EXPECT_EQ(f.name_expressions[2], "kt::attention_bwd_convert_dq<kt::fp16, 64>");
}

TEST(AttentionBackwardModel, CountsFiveProductsAndRanksTheSpace) {
  const DeviceDesc& h200 = device_profile("h200");
  const AttentionBackwardProblem p = shape("b=4,hq=32,hkv=8,s=4096,d=128", true);
  // 10 · pairs · d: 2.5 times the forward's 4 · pairs · d.
  EXPECT_DOUBLE_EQ(p.flops(), 2.5 * p.forward().flops());
  const OpSpec& op = op_spec("attention-backward");
  const auto ranked = op.ranked_configs(to_key(p), h200);
  ASSERT_EQ(ranked.size(), 16u);
  for (std::size_t i = 1; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].predicted_us, ranked[i].predicted_us);
  // wgmma beats mma.sync on Hopper: fa3 first, two consumers of 64 keys and 80 query rows a step
  // (FlashAttention-3's d128 tile: a step's fixed cost over more rows); never faster than the
  // FLOPs at the wgmma peak, nor fa2 than at the mma.sync one.
  EXPECT_EQ(ranked.front().config_key, "fa3.bm80.bn128.s2");
  EXPECT_GT(ranked.front().predicted_us, p.flops() / (h200.wgmma_tflops * 1e12) * 1e6);
  for (const RankedConfigKey& r : ranked) {
    if (r.config_key.starts_with("fa2.")) {
      EXPECT_GT(r.predicted_us, p.flops() / (h200.mma_sync_tflops * 1e12) * 1e6);
    }
  }
  // The causal mask saves about half.
  AttentionBackwardProblem full = p;
  full.causal = false;
  const auto full_ranked = op.ranked_configs(to_key(full), h200);
  EXPECT_GT(full_ranked.front().predicted_us, 1.6 * ranked.front().predicted_us);
  // Ordering dQ's additions never makes a config faster.
  AttentionBackwardProblem det = p;
  det.deterministic = true;
  for (const RankedConfigKey& r : ranked)
    EXPECT_GE(op.predicted_us(to_key(det), r.config_key, h200), r.predicted_us) << r.config_key;
  // One query block a step per CTA more (stages 1) never wins over loading it during the step.
  EXPECT_LT(op.predicted_us(to_key(p), "fa2.bm64.bn128.w8.s2", h200),
            op.predicted_us(to_key(p), "fa2.bm64.bn128.w8.s1", h200));
  const std::string text = op.explain(to_key(det), "fa2.bm64.bn128.w8.s2", h200);
  for (const char* part : {"8 warps of 16 keys", "chunks of 16", "CTAs", "4 query head(s) each",
                           "key-block order", "workspace", "predicted"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  const std::string fa3 = op.explain(to_key(p), "fa3.bm64.bn128.s2", h200);
  for (const char* part : {"fa3 backward", "2 consumer warpgroup(s) of 64 keys", "ring of 2",
                           "TMA reductions", "1 CTA/SM"})
    EXPECT_NE(fa3.find(part), std::string::npos) << part << "\n" << fa3;
}

// The fa3 head_dim 256 estimate against the H100's tuned medians of its one config
// (bench/results/2026-12-06-h100-attention-backward-d256: 1828 µs full, 1016 causal): within 10%
// once the n32 Sᵀ and dPᵀ pay for their shared-memory reads (24 clocks a step against 16); counted
// at the tensor rate alone they were 18-20% short.
TEST(AttentionBackwardModel, Fa3HeadDim256PredictsTheRecordedH100Medians) {
  const DeviceDesc& h100 = device_profile("h100-sxm");
  const OpSpec& op = op_spec("attention-backward");
  for (const auto& [causal, measured_us] : {std::pair{false, 1828.3}, std::pair{true, 1016.4}}) {
    const AttentionBackwardProblem p = shape("b=2,h=8,s=4096,d=256", causal);
    const double predicted = op.predicted_us(to_key(p), "fa3.bm64.bn64.s2", h100);
    EXPECT_NEAR(predicted / measured_us, 1.0, 0.10) << to_key(p) << ": " << predicted << " us";
  }
}

// fa2 at head_dim 64 on the H200 (bench/results/2026-12-05-h200-attention-backward, b = 4,
// 32 heads, 4096 full): warps of 32 keys ran 5888-6050 µs, warps of 16 keys 7184-7470, for they
// read the query block's Q and dO from shared memory half as often a FLOP. The model ranks them
// so, and within 25% of those medians.
TEST(AttentionBackwardModel, Fa2WarpsOfMoreKeysReadLessSharedMemory) {
  const DeviceDesc& h200 = device_profile("h200");
  const OpSpec& op = op_spec("attention-backward");
  const std::string key = to_key(shape("b=4,h=32,s=4096,d=64", false));
  const double keys32 = op.predicted_us(key, "fa2.bm128.bn128.w4.s1", h200);
  const double keys16 = op.predicted_us(key, "fa2.bm128.bn128.w8.s2", h200);
  EXPECT_LT(keys32, keys16);
  EXPECT_NEAR(keys32 / 5942.5, 1.0, 0.25) << keys32;
  EXPECT_NEAR(keys16 / 7184.1, 1.0, 0.25) << keys16;
}

TEST(AttentionBackwardDistance, NeighboursShareDtypeHeadDimMaskAndDeterminism) {
  const OpSpec& op = op_spec("attention-backward");
  auto d = [&](const char* a, const char* b) { return op.distance(a, b); };
  const char* base = "attnbwd:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal";
  EXPECT_EQ(d(base, base), 0.0);
  EXPECT_DOUBLE_EQ(*d(base, "attnbwd:bf16:b4.hq32.hkv8.sq2048.sk4096.d128.causal"), 1.0);
  EXPECT_DOUBLE_EQ(*d(base, "attnbwd:bf16:b8.hq32.hkv8.sq4096.sk4096.d128.causal"), 1.0);
  EXPECT_FALSE(d(base, "attnbwd:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal.det"));
  EXPECT_FALSE(d(base, "attnbwd:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.full"));
  EXPECT_FALSE(d(base, "attnbwd:bf16:b4.hq32.hkv8.sq4096.sk4096.d64.causal"));
  EXPECT_FALSE(d(base, "attnbwd:fp16:b4.hq32.hkv8.sq4096.sk4096.d128.causal"));
  EXPECT_EQ(op.neighbour_prefix(base), "attnbwd:bf16:");
}

TEST(AttentionBackwardRegistry, FoundByNameAndByItsOwnPrefix) {
  EXPECT_EQ(op_spec("attention-backward").name(), "attention-backward");
  EXPECT_EQ(op_spec_for_key("attnbwd:bf16:b1.hq1.hkv1.sq1.sk1.d64.full").name(),
            "attention-backward");
  // "attn:" and "attnbwd:" never claim each other's keys.
  EXPECT_EQ(op_spec_for_key("attn:bf16:b1.hq1.hkv1.sq1.sk1.d64.full").name(), "attention");
}

TEST(AttentionBackwardCli, ExplainsWithBothFlagsAndListsTheOp) {
  const std::string db = (std::filesystem::temp_directory_path() /
                          ("kt_cli_attnbwd_" + std::to_string(getpid()) + ".db"))
                             .string();
  const auto ops = testing::run_cli("ops", db);
  EXPECT_EQ(ops.status, 0) << ops.output;
  for (const char* text : {"attention-backward", "--deterministic", "attention-backward-d128"})
    EXPECT_NE(ops.output.find(text), std::string::npos) << text << "\n" << ops.output;
  const auto r = testing::run_cli(
      "explain --op attention-backward --shape b=2,hq=16,hkv=4,sq=1000,sk=2000,d=64 --causal "
      "--deterministic",
      db);
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* text :
       {"attnbwd:bf16:b2.hq16.hkv4.sq1000.sk2000.d64.causal.det", "model's pick: fa", "predicted"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  const auto d32 =
      testing::run_cli("explain --op attention-backward --shape b=1,h=2,s=64,d=32", db);
  EXPECT_EQ(d32.status, 1) << d32.output;
  EXPECT_NE(d32.output.find("expected 64, 96, 128 or 256"), std::string::npos) << d32.output;
  const auto d256 =
      testing::run_cli("explain --op attention-backward --shape b=1,h=2,s=64,d=256", db);
  EXPECT_EQ(d256.status, 0) << d256.output;
  EXPECT_NE(d256.output.find("2 head_dim parts"), std::string::npos) << d256.output;
  std::filesystem::remove(db);
}

}  // namespace
}  // namespace kt
