// RMSNorm through the op registry without a GPU: keys, the shape syntax and its errors, configs,
// the space on awkward hiddens, the model's ordering, and the registry's lookups.
#include <gtest/gtest.h>

#include <string>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "ops/rmsnorm/rmsnorm_config.hpp"

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

TEST(RmsnormKeys, RoundTripEveryField) {
  for (const RmsnormProblem& p :
       {RmsnormProblem{8192, 4096, DType::kBF16, false}, RmsnormProblem{1, 13, DType::kFP16, true},
        RmsnormProblem{32768, 16384, DType::kBF16, true}}) {
    EXPECT_EQ(parse_rmsnorm_key(to_key(p)), p) << to_key(p);
  }
  EXPECT_EQ(to_key(RmsnormProblem{8192, 4096, DType::kBF16, true}), "rmsnorm:bf16:r8192.h4096.res");
  const RmsnormConfig c{64, 4, 2, RmsnormMode::kTwoPass};
  EXPECT_EQ(parse_rmsnorm_config_key(to_key(c)), c);
  EXPECT_EQ(to_key(c), "rms.t64.r4.v2.2pass");
  const RmsnormConfig pers{256, 1, 8, RmsnormMode::kRegisters, true};
  EXPECT_EQ(to_key(pers), "rms.t256.r1.v8.reg.pers");
  EXPECT_EQ(parse_rmsnorm_config_key(to_key(pers)), pers);
  EXPECT_FALSE(parse_rmsnorm_config_key("rms.t256.r1.v8.reg").persistent);
  EXPECT_EQ(rmsnorm_kernel_expression({64, 8192, DType::kBF16, true}, pers),
            "kt::rmsnorm_persistent<kt::bf16, 8192, 256, 1, 8, true>");
}

TEST(RmsnormKeys, RefuseMalformedKeysNamingTheProblem) {
  EXPECT_NE(error_of([] { parse_rmsnorm_key("rmsnorm:bf16:r8192"); }).find("rROWS.hHIDDEN"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_rmsnorm_key("rmsnorm:bf16:r08.h16"); }).find("not canonical"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_rmsnorm_key("rmsnorm:fp32:r8.h16"); }).find("bf16 or fp16"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_rmsnorm_config_key("rms.t64.r4.v2.fast"); }).find("mode"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_rmsnorm_config_key("rms.t64.r4"); }).find("rms.tT.rR.vV.MODE"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_rmsnorm_config_key("rms.t64.r4.v2.reg.grid"); }).find("pers"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_rmsnorm_config_key("rms.t64.r4.v2.reg.pers.x"); }).find("[.pers]"),
            std::string::npos);
}

TEST(RmsnormPersistent, RefusesOtherModesAndSlicesOverTheLaunchBoundsRegisters) {
  const DeviceDesc& h200 = device_profile("h200");
  const RmsnormProblem p{16384, 16384, DType::kBF16, true};
  EXPECT_NE(validate(p, {256, 1, 8, RmsnormMode::kShared, true}, h200)->find("persistent grid"),
            std::string::npos);
  EXPECT_FALSE(validate({16384, 8192, DType::kBF16, true},
                        {256, 1, 8, RmsnormMode::kRegisters, true}, h200));
  // 4 vectors of 8 with r, the next row's and the weights: ~160 registers, over 65536 / 512.
  EXPECT_NE(validate(p, {512, 1, 8, RmsnormMode::kRegisters, true}, h200)->find("512 threads"),
            std::string::npos);
  EXPECT_NE(validate(p, {256, 1, 8, RmsnormMode::kRegisters, true}, h200)->find("registers"),
            std::string::npos);
}

TEST(RmsnormValidate, RefusesConfigsOverTheLaunchBoundsRegisters) {
  const DeviceDesc& h200 = device_profile("h200");
  // 1024 threads leave 64 registers a thread: too few for the two-pass mode's first pass over
  // four 8-wide vectors of x and r (~76 registers; ptxas 13.0 used 79 at 512 threads), or for a
  // registers-mode slice of 40 elements (~96; ptxas spilled 368 bytes).
  EXPECT_NE(validate({8192, 16384, DType::kBF16, true}, {512, 2, 8, RmsnormMode::kTwoPass}, h200)
                ->find("over the 64 that 1024 threads"),
            std::string::npos);
  EXPECT_NE(validate({8192, 5120, DType::kBF16, false}, {128, 8, 8, RmsnormMode::kRegisters}, h200)
                ->find("over the 64"),
            std::string::npos);
  // The same vectors in 512 threads (128 registers) fit.
  EXPECT_FALSE(
      validate({8192, 16384, DType::kBF16, true}, {512, 1, 8, RmsnormMode::kTwoPass}, h200));
}

TEST(RmsnormPersistent, PlansAGridOfTheResidentCtasOrFewerRows) {
  const RmsnormConfig pers{256, 2, 8, RmsnormMode::kRegisters, true};
  EXPECT_EQ(plan_launch({16384, 8192, DType::kBF16, false}, pers, 264).grid[0], 264u);
  EXPECT_EQ(plan_launch({7, 8192, DType::kBF16, false}, pers, 264).grid[0], 4u);
  EXPECT_EQ(plan_launch({1u << 31, 8, DType::kBF16, false}, pers, 264).grid[0], 264u);
  EXPECT_THROW(plan_launch({7, 8192, DType::kBF16, false}, pers), Error);
  EXPECT_EQ(plan_launch({16384, 8192, DType::kBF16, false}, {256, 2, 8}).grid[0], 8192u);
}

TEST(RmsnormPersistent, SpaceHasPersistentTwinsPastOneWaveOnly) {
  const DeviceDesc& h200 = device_profile("h200");
  // Rows of 16384 with the residual fit no two slices (the test above): plain ones only.
  for (std::int64_t hidden : {13, 1000, 5120, 8192, 16384}) {
    const RmsnormProblem large{32768, hidden, DType::kBF16, hidden < 16384};
    int persistent = 0;
    for (const RmsnormConfig& c : enumerate_rmsnorm_configs(large, h200)) {
      if (!c.persistent) continue;
      ++persistent;
      EXPECT_EQ(c.mode, RmsnormMode::kRegisters) << to_key(c);
      EXPECT_FALSE(validate(large, c, h200)) << to_key(c);
      EXPECT_GT(estimate(large, {c.threads_per_row, c.rows_per_cta, c.vec}, h200).grid_waves.waves,
                1)
          << to_key(c);
    }
    EXPECT_GT(persistent, 0) << hidden;
    for (const RmsnormConfig& c : enumerate_rmsnorm_configs({1, hidden, DType::kBF16, false}, h200))
      EXPECT_FALSE(c.persistent) << hidden << " " << to_key(c);
  }
}

TEST(RmsnormShape, NamesTheBadField) {
  const OpSpec& op = op_spec("rmsnorm");
  const ShapeOptions o;
  EXPECT_EQ(op.problem_key("rows=8192,hidden=4096", o), "rmsnorm:bf16:r8192.h4096");
  EXPECT_NE(error_of([&] { op.problem_key("rows=8192", o); }).find("no hidden="),
            std::string::npos);
  EXPECT_NE(error_of([&] { op.problem_key("hidden=64", o); }).find("no rows="), std::string::npos);
  EXPECT_NE(error_of([&] { op.problem_key("rows=1,hidden=0", o); }).find("hidden must be >= 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { op.problem_key("rows=1,cols=4", o); }).find("'cols'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { op.problem_key("rows=1,rows=2,hidden=4", o); }).find("twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { op.problem_key("rows=x,hidden=4", o); }).find("rows"),
            std::string::npos);
  ShapeOptions causal;
  causal.flags = {"causal"};
  EXPECT_NE(error_of([&] { op.problem_key("rows=1,hidden=4", causal); }).find("--causal"),
            std::string::npos);
  ShapeOptions residual;
  residual.flags = {"residual"};
  EXPECT_EQ(op.problem_key("rows=2,hidden=13", residual), "rmsnorm:bf16:r2.h13.res");
}

TEST(RmsnormSpace, CoversAwkwardHiddensWithValidConfigsOnly) {
  const DeviceDesc& h200 = device_profile("h200");
  for (std::int64_t hidden : {1, 13, 1000, 2048, 5120, 16384, 65536}) {
    const RmsnormProblem p{4096, hidden, DType::kBF16, hidden % 2 == 0};
    const auto configs = enumerate_rmsnorm_configs(p, h200);
    EXPECT_FALSE(configs.empty()) << hidden;
    for (const RmsnormConfig& c : configs) {
      EXPECT_FALSE(validate(p, c, h200)) << to_key(c);
      // A row not starting on a vector boundary has its ends peeled, one element a lane.
      if (p.hidden % c.vec != 0) {
        EXPECT_GE(c.threads_per_row, 2 * (c.vec - 1)) << to_key(c);
      }
      EXPECT_GE(p.hidden, c.vec) << to_key(c);
    }
  }
  const RmsnormProblem odd{8, 13, DType::kBF16, false};
  EXPECT_TRUE(validate(odd, {32, 1, 8, RmsnormMode::kRegisters}, h200));
  EXPECT_TRUE(validate(odd, {8, 4, 8, RmsnormMode::kRegisters}, h200));   // 14 peeled elements
  EXPECT_FALSE(validate(odd, {8, 4, 4, RmsnormMode::kRegisters}, h200));  // 6 peeled
  const RmsnormProblem wide{8, 65536, DType::kBF16, false};
  EXPECT_TRUE(validate(wide, {32, 1, 8, RmsnormMode::kRegisters}, h200));  // 256 vectors a thread
}

TEST(RmsnormModel, PrefersWideVectorsAndPredictsNearTheCopyRate) {
  const DeviceDesc& h200 = device_profile("h200");
  const OpSpec& op = op_spec("rmsnorm");
  const std::string key = "rmsnorm:bf16:r16384.h8192";
  const auto ranked = op.ranked_configs(key, h200);
  ASSERT_FALSE(ranked.empty());
  const RmsnormConfig best = parse_rmsnorm_config_key(ranked[0].config_key);
  EXPECT_EQ(best.vec, 8);
  // 16384 x 8192 bf16 read and written: 537 MB at ~4.3 TB/s is ~126 us; the model's pick within
  // the launch and the row latency of it, never faster than the bytes allow.
  const double copy_us = parse_rmsnorm_key(key).min_bytes() / (h200.dram_gbps * 1e3);
  EXPECT_GE(ranked[0].predicted_us, copy_us);
  EXPECT_LE(ranked[0].predicted_us, copy_us * 1.15);
  for (std::size_t i = 1; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].predicted_us, ranked[i].predicted_us);
}

TEST(RmsnormModel, DefaultSearchMeasuresPersistentTwinsOnLargeShapes) {
  // The default search measures the model's top 24 (tuner/op_tuning.hpp).
  const DeviceDesc& h200 = device_profile("h200");
  for (const char* key : {"rmsnorm:bf16:r16384.h8192", "rmsnorm:bf16:r32768.h16384",
                          "rmsnorm:bf16:r16384.h8192.res", "rmsnorm:bf16:r32768.h5120.res"}) {
    const auto ranked = op_spec("rmsnorm").ranked_configs(key, h200);
    std::string top;
    for (std::size_t i = 0; i < std::min<std::size_t>(24, ranked.size()); ++i)
      top += ranked[i].config_key + " ";
    EXPECT_NE(top.find(".pers"), std::string::npos) << key << ": " << top;
  }
}

TEST(RmsnormModel, PeeledRowsOfLargeHiddensPickAtMostFourWideVectors) {
  // A peeled row loads its weights one element a lane: 8-wide configs ran 0.6-0.8 of the copy
  // on these held-out shapes where 4-wide ones reached it.
  const DeviceDesc& h200 = device_profile("h200");
  for (const char* key :
       {"rmsnorm:bf16:r4479.h7137", "rmsnorm:bf16:r11850.h10343", "rmsnorm:bf16:r13976.h2187",
        "rmsnorm:bf16:r32090.h2639.res", "rmsnorm:fp16:r4096.h16383"}) {
    const auto ranked = op_spec("rmsnorm").ranked_configs(key, h200);
    ASSERT_FALSE(ranked.empty()) << key;
    EXPECT_LE(parse_rmsnorm_config_key(ranked[0].config_key).vec, 4)
        << key << ": " << ranked[0].config_key;
  }
}

TEST(RmsnormDistance, NeighboursShareDtypeResidualAndHidden) {
  const OpSpec& op = op_spec("rmsnorm");
  auto d = [&](const char* a, const char* b) { return op.distance(a, b); };
  EXPECT_EQ(d("rmsnorm:bf16:r4096.h4096", "rmsnorm:bf16:r4096.h4096"), 0.0);
  EXPECT_DOUBLE_EQ(*d("rmsnorm:bf16:r1024.h4096", "rmsnorm:bf16:r4096.h4096"), 2.0);
  EXPECT_FALSE(d("rmsnorm:bf16:r4096.h4096", "rmsnorm:fp16:r4096.h4096"));
  EXPECT_FALSE(d("rmsnorm:bf16:r4096.h4096", "rmsnorm:bf16:r4096.h4096.res"));
  EXPECT_FALSE(d("rmsnorm:bf16:r8192.h11000", "rmsnorm:bf16:r8192.h8192"));
}

TEST(OpRegistry, FindsOpsByNameAndKeyAndListsThemWhenNot) {
  EXPECT_EQ(op_spec("rmsnorm").name(), "rmsnorm");
  EXPECT_EQ(op_spec_for_key("rmsnorm:bf16:r1.h1").name(), "rmsnorm");
  EXPECT_EQ(op_spec_for_key("gemm:bf16:bf16:nt:1x1x1").name(), "gemm");
  EXPECT_EQ(op_spec_for_key("attn:bf16:b1.hq1.hkv1.sq1.sk1.d64.full").name(), "attention");
  const std::string unknown = error_of([] { op_spec("conv2d"); });
  for (const char* name : {"'conv2d'", "gemm", "attention", "rmsnorm", "kerntune ops"})
    EXPECT_NE(unknown.find(name), std::string::npos) << unknown;
  EXPECT_NE(error_of([] { op_spec_for_key("conv:1x1"); }).find("rmsnorm:"), std::string::npos);
}

TEST(OpRegistry, RefusesAnOpWhosePrefixCollides) {
  OpEntry copy = OpRegistry::instance().by_name("rmsnorm");
  EXPECT_NE(error_of([&] { OpRegistry::instance().add(copy); }).find("collides"),
            std::string::npos);
}

TEST(OpRegistry, EveryOpExplainsAndGeneratesItsModelPick) {
  const DeviceDesc& h200 = device_profile("h200");
  for (const auto& [op, key] : std::vector<std::pair<std::string, std::string>>{
           {"gemm", "gemm:bf16:bf16:nt:4096x4096x4096"},
           {"attention", "attn:bf16:b2.hq16.hkv16.sq4096.sk4096.d128.full"},
           {"rmsnorm", "rmsnorm:fp16:r4096.h5120.res"}}) {
    const OpSpec& spec = op_spec(op);
    const auto ranked = spec.ranked_configs(key, h200);
    ASSERT_FALSE(ranked.empty()) << key;
    EXPECT_FALSE(spec.validate_config(key, ranked[0].config_key, h200)) << ranked[0].config_key;
    EXPECT_NE(spec.explain(key, ranked[0].config_key, h200).find("predicted"), std::string::npos);
    const KernelSource source = spec.kernel_source(key, ranked[0].config_key, "");
    EXPECT_FALSE(source.headers.empty());
    EXPECT_FALSE(source.name_expressions.empty());
    EXPECT_TRUE(spec.validate_config(key, "garbage", h200)) << key;
  }
}

}  // namespace
}  // namespace kt
