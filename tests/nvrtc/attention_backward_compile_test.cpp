// The attention backward's kernels under NVRTC, no GPU needed: every config of the space (the
// configs validate() admits are the ones shipped) compiles with zero spill bytes, fa2 for sm_90a
// and sm_80, fa3 for sm_90a with no wgmma serialization warning (C75xx) and its registers within
// the launch bounds' cap, on both head dims, masks, dtypes and with and without the deterministic
// dQ order (each config in two variants, the pairs covering all of them); the PTX adds dQ with
// FP32 reductions (fa3: TMA tensor reductions, its operands by TMA, wgmma, transposed stmatrix,
// setmaxnreg) and, deterministic, orders them with acquire/release flags; the check kernels
// compile; and `kerntune tune --op attention-backward` predicts and stores a winner.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "ops/attention_backward/attention_backward_config.hpp"
#include "support/cli_runner.hpp"
#include "support/parallel_for.hpp"

namespace kt {
namespace {

struct Variant {
  DType dtype;
  bool causal;
  bool deterministic;
  const char* arch;
};

AttentionBackwardProblem problem(std::int64_t d, const Variant& v) {
  AttentionBackwardProblem p;
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.seqlen_q = 1000;
  p.seqlen_k = 777;
  p.head_dim = d;
  p.dtype = v.dtype;
  p.causal = v.causal;
  p.deterministic = v.deterministic;
  return p;
}

struct Case {
  std::string label;
  gen::GeneratedSource source;
  int max_registers;  // the main kernel's cap: 65536 / threads (launch bounds), at most 255
};

// The configs a family's space holds at a head_dim.
struct SpaceSize {
  std::int64_t head_dim;
  std::size_t configs;
};

// Each config of `family` in the space of each head_dim as compile cases: config i of a
// variant's own space in the variants of group i % groups.size() (the spaces of a mask differ
// where the causal mask takes more registers). `sizes` holds the first variant's counts.
std::vector<Case> space_cases(AttentionFamily family,
                              const std::vector<std::vector<Variant>>& groups,
                              const std::vector<SpaceSize>& sizes) {
  const DeviceDesc& h200 = device_profile("h200");
  const OpSpec& op = op_spec("attention-backward");
  AttentionBackwardDomains domains;
  domains.families = {family};
  std::vector<Case> cases;
  for (const auto [d, count] : sizes) {
    EXPECT_EQ(enumerate_attention_backward_configs(problem(d, groups[0][0]), h200, domains).size(),
              count)
        << "head_dim " << d;
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (const Variant& v : groups[g]) {
        const AttentionBackwardProblem p = problem(d, v);
        const auto configs = enumerate_attention_backward_configs(p, h200, domains);
        for (std::size_t i = g; i < configs.size(); i += groups.size())
          cases.push_back({to_key(p) + " " + to_key(configs[i]) + " " + v.arch,
                           gen::generate(op, to_key(p), to_key(configs[i]), "", v.arch),
                           std::min(255, 65536 / configs[i].num_threads(d) / 8 * 8)});
      }
  }
  return cases;
}

// Compiles every case on every core; fails each one that does not compile, spills, reports a
// wgmma serialization (C75xx), exceeds its register cap, or lacks a ptxas report for one of its
// three kernels. Prints each main kernel's registers.
void expect_clean_compiles(const std::vector<Case>& cases) {
  std::vector<std::string> failures(cases.size()), table(cases.size());
  testing::parallel_for(cases.size(), [&](std::size_t i) {
    try {
      const gen::CompiledKernel k = gen::compile(cases[i].source);
      const gen::KernelResources main = k.resources(0);
      table[i] = cases[i].label + ": " + std::to_string(main.registers) + " registers";
      if (k.cubin.empty()) failures[i] = cases[i].label + ": empty cubin";
      if (k.report.total_spill_bytes() != 0)
        failures[i] =
            cases[i].label + ": spills " + std::to_string(k.report.total_spill_bytes()) + " bytes";
      if (!k.report.performance_warnings.empty())
        failures[i] = cases[i].label + ": " + k.report.performance_warnings.front();
      if (main.registers > cases[i].max_registers)
        failures[i] = cases[i].label + ": " + std::to_string(main.registers) +
                      " registers, over the launch bounds' " +
                      std::to_string(cases[i].max_registers);
      if (main.registers == 0 || k.resources(1).registers == 0 || k.resources(2).registers == 0)
        failures[i] = cases[i].label + ": no ptxas report for one of its three kernels";
    } catch (const CompileError& e) {
      failures[i] = cases[i].label + ": " + e.log().substr(0, 2000);
    }
  });
  for (const std::string& line : table) std::printf("%s\n", line.c_str());
  for (const std::string& f : failures) EXPECT_TRUE(f.empty()) << f;
}

TEST(AttentionBackwardCompile, EveryFa2ConfigOfTheSpaceCompilesSpillFreeForSm90aAndSm80) {
  // Every config in each of four variants that together cover both dtypes, masks, orders and
  // archs: fa2's threads run at the 255-register ceiling, where ptxas spills one variant of a
  // config and not its twins.
  const std::vector<std::vector<Variant>> every_variant = {{{DType::kBF16, true, false, "sm_90a"},
                                                            {DType::kFP16, false, true, "sm_80"},
                                                            {DType::kFP16, false, false, "sm_90a"},
                                                            {DType::kBF16, true, true, "sm_80"}}};
  expect_clean_compiles(space_cases(AttentionFamily::kSm80, every_variant, {{64, 17}, {128, 12}}));
}

// head_dim 96 (12-chunk rows) and 256 (two CTAs a key block, a half of the columns each): every
// fa2 config of each variant's space, ordered or not, on the H200 (sm_90a) and the A100 (sm_80),
// spill-free.
TEST(AttentionBackwardCompile, HeadDim96And256Fa2ConfigsCompileSpillFreeEveryVariant) {
  const OpSpec& op = op_spec("attention-backward");
  const Variant variants[] = {{DType::kBF16, true, false, "sm_90a"},
                              {DType::kFP16, false, true, "sm_90a"},
                              {DType::kBF16, false, false, "sm_80"},
                              {DType::kFP16, true, true, "sm_80"}};
  std::vector<Case> cases;
  for (std::int64_t d : {96, 256})
    for (const Variant& v : variants) {
      const AttentionBackwardProblem p = problem(d, v);
      AttentionBackwardDomains fa2_only;
      fa2_only.families = {AttentionFamily::kSm80};
      const auto configs = enumerate_attention_backward_configs(
          p, device_profile(std::string(v.arch) == "sm_80" ? "a100" : "h200"), fa2_only);
      EXPECT_FALSE(configs.empty()) << to_key(p);
      for (const AttentionBackwardConfig& c : configs) {
        EXPECT_EQ(c.family, AttentionFamily::kSm80);
        cases.push_back({to_key(p) + " " + to_key(c) + " " + v.arch,
                         gen::generate(op, to_key(p), to_key(c), "", v.arch), 255});
      }
    }
  expect_clean_compiles(cases);
}

TEST(AttentionBackwardCompile, EveryFa3ConfigOfTheSpaceCompilesCleanlyForSm90a) {
  // d64: {64, 64}, {128, 64} x stages 2, 3 and {128, 128} s2; d128: {64, 64} x 2, 3, {64, 128}
  // s2 and {80, 128} s2 (dQ transposed); d256: {64, 64} s2 (validate() rejects the rest with its
  // reason).
  // Config i in the variants of group i % 2, which together cover both dtypes, masks and orders.
  const std::vector<std::vector<Variant>> groups = {
      {{DType::kBF16, true, false, "sm_90a"}, {DType::kFP16, false, true, "sm_90a"}},
      {{DType::kFP16, false, false, "sm_90a"}, {DType::kBF16, true, true, "sm_90a"}}};
  expect_clean_compiles(space_cases(AttentionFamily::kSm90, groups, {{64, 5}, {128, 4}, {256, 1}}));
}

// head_dim 256's one fa3 config in every variant: both dtypes, masks and orders.
TEST(AttentionBackwardCompile, HeadDim256Fa3CompilesCleanlyEveryVariant) {
  const OpSpec& op = op_spec("attention-backward");
  std::vector<Case> cases;
  for (DType dtype : {DType::kBF16, DType::kFP16})
    for (bool causal : {false, true})
      for (bool deterministic : {false, true}) {
        const AttentionBackwardProblem p = problem(256, {dtype, causal, deterministic, "sm_90a"});
        cases.push_back({to_key(p) + " fa3.bm64.bn64.s2",
                         gen::generate(op, to_key(p), "fa3.bm64.bn64.s2", "", "sm_90a"), 168});
      }
  expect_clean_compiles(cases);
}

TEST(AttentionBackwardCompile, DqIsReducedInFp32AndOrderedWhenDeterministic) {
  const OpSpec& op = op_spec("attention-backward");
  const Variant plain{DType::kBF16, true, false, "sm_90a"};
  const Variant ordered{DType::kBF16, true, true, "sm_90a"};
  const std::string free_ptx = gen::compile_to_ptx(
      gen::generate(op, to_key(problem(128, plain)), "fa2.bm64.bn128.w8.s2", "", "sm_90a"));
  const std::string det_ptx = gen::compile_to_ptx(
      gen::generate(op, to_key(problem(128, ordered)), "fa2.bm64.bn128.w8.s2", "", "sm_90a"));
  for (const std::string* ptx : {&free_ptx, &det_ptx}) {
    EXPECT_NE(ptx->find("red.relaxed.gpu.global.add.f32"), std::string::npos);
    EXPECT_NE(ptx->find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos);
    EXPECT_NE(ptx->find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), std::string::npos);
  }
  EXPECT_EQ(free_ptx.find("ld.acquire.gpu"), std::string::npos);
  EXPECT_NE(det_ptx.find("ld.acquire.gpu"), std::string::npos);
  EXPECT_NE(det_ptx.find("st.release.gpu"), std::string::npos);
}

TEST(AttentionBackwardCompile, Fa3IsWgmmaFedByTmaWithDqReducedByTma) {
  const OpSpec& op = op_spec("attention-backward");
  const Variant plain{DType::kBF16, true, false, "sm_90a"};
  const Variant ordered{DType::kFP16, false, true, "sm_90a"};
  const std::string free_ptx = gen::compile_to_ptx(
      gen::generate(op, to_key(problem(128, plain)), "fa3.bm64.bn128.s2", "", "sm_90a"));
  const std::string det_ptx = gen::compile_to_ptx(
      gen::generate(op, to_key(problem(64, ordered)), "fa3.bm128.bn128.s2", "", "sm_90a"));
  for (const std::string* ptx : {&free_ptx, &det_ptx}) {
    // Sᵀ and dPᵀ (SS), dV and dK (A in registers), dQ (SS, B N-major).
    EXPECT_NE(ptx->find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos);
    EXPECT_NE(ptx->find("cp.async.bulk.tensor.4d.shared::cluster.global.tile"), std::string::npos);
    EXPECT_NE(ptx->find("cp.async.bulk.tensor.1d.shared::cluster.global.tile"), std::string::npos);
    EXPECT_NE(ptx->find("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile"),
              std::string::npos);
    EXPECT_NE(ptx->find("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), std::string::npos);
    EXPECT_NE(ptx->find("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group"),
              std::string::npos);
    EXPECT_NE(ptx->find("setmaxnreg.inc.sync.aligned.u32 240"), std::string::npos);
    EXPECT_NE(ptx->find("setmaxnreg.dec.sync.aligned.u32 24"), std::string::npos);
    EXPECT_EQ(ptx->find("red.relaxed.gpu.global.add.f32"), std::string::npos)
        << "fa3 adds dQ by TMA reductions, not atomics from registers";
  }
  EXPECT_NE(free_ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"),
            std::string::npos);
  EXPECT_NE(det_ptx.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"), std::string::npos);
  EXPECT_EQ(free_ptx.find("ld.acquire.gpu"), std::string::npos);
  EXPECT_NE(det_ptx.find("ld.acquire.gpu"), std::string::npos);
  EXPECT_NE(det_ptx.find("atom.acq_rel.gpu.global.add.u32"), std::string::npos);
}

// At head_dim 256 the two consumers of a key block take half the step's query rows each (Sᵀ, dPᵀ:
// n32 products), hold 128 columns each (dV, dK: n128 products with A from shared memory, M-major)
// and stage dQ in 64-column passes (n64) for TMA reductions.
TEST(AttentionBackwardCompile, Fa3AtHeadDim256StagesDqForTmaReductions) {
  const OpSpec& op = op_spec("attention-backward");
  const std::string ptx = gen::compile_to_ptx(
      gen::generate(op, to_key(problem(256, {DType::kBF16, true, true, "sm_90a"})),
                    "fa3.bm64.bn64.s2", "", "sm_90a"));
  EXPECT_EQ(ptx.find("red.relaxed.gpu.global.add"), std::string::npos);
  EXPECT_NE(ptx.find("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile"),
            std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16"), std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"), std::string::npos);
  // dV and dK: both operands descriptors, both transposed.
  const std::size_t dkv = ptx.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
  ASSERT_NE(dkv, std::string::npos);
  const std::size_t dkv_end = ptx.find(';', dkv);
  EXPECT_NE(ptx.substr(dkv, dkv_end - dkv).find(", 1, 1, 1, 1"), std::string::npos)
      << ptx.substr(dkv, dkv_end - dkv);
  EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 240"), std::string::npos);
  EXPECT_NE(ptx.find("atom.acq_rel.gpu.global.add.u32"), std::string::npos);
}

TEST(AttentionBackwardCompile, CheckKernelsCompileForBothDtypes) {
  for (const char* type : {"kt::bf16", "kt::fp16"}) {
    const KernelSource checks{
        "attention_bwd_check",
        {"kerntune/attention_backward/attention_bwd_check.cuh"},
        {std::string("kt::fill_random<") + type + ">", std::string("kt::fill_poison<") + type + ">",
         std::string("kt::attention_bwd_reference_forward<") + type + ">",
         std::string("kt::attention_bwd_reference_dq<") + type + ">",
         std::string("kt::attention_bwd_reference_dkv<") + type + ">",
         std::string("kt::attention_bwd_gather_rows<") + type + ">"}};
    const gen::CompiledKernel k = gen::compile(gen::generate(checks, "sm_80"));
    EXPECT_EQ(k.lowered_names.size(), 6u) << type;
    EXPECT_EQ(k.report.total_spill_bytes(), 0) << type;
  }
}

TEST(AttentionBackwardCompile, TuneWithoutAGpuStoresAPredictedWinner) {
  const std::string db = (std::filesystem::temp_directory_path() /
                          ("kt_attnbwd_predict_" + std::to_string(getpid()) + ".db"))
                             .string();
  std::filesystem::remove(db);
  const auto tune = testing::run_cli(
      "tune --op attention-backward --shape b=1,hq=8,hkv=2,sq=300,sk=500,d=64 --causal "
      "--deterministic --candidates 2",
      db);
  EXPECT_EQ(tune.status, 0) << tune.output;
  EXPECT_NE(tune.output.find("winner"), std::string::npos) << tune.output;
  const auto ls = testing::run_cli("cache ls", db);
  EXPECT_NE(ls.output.find("attnbwd:bf16:b1.hq8.hkv2.sq300.sk500.d64.causal.det"),
            std::string::npos)
      << ls.output;
  const auto gen = testing::run_cli(
      "gen --op attention-backward --shape b=1,h=2,s=64,d=128 --config fa2.bm64.bn64.w4.s2", db);
  EXPECT_EQ(gen.status, 0) << gen.output;
  EXPECT_NE(gen.output.find("kt::attention_bwd_sm80<kt::bf16, 128, 64, 64, 4, 2, false, false>"),
            std::string::npos)
      << gen.output;
  std::filesystem::remove(db);
}

TEST(AttentionBackwardCompile, TuneGrantsTheWorkspaceTheProblemNeeds) {
  // 16k tokens x 16 heads x d128: a 128 MiB FP32 dQ accumulator, over the tuner's 64 MiB cap.
  const std::string db = (std::filesystem::temp_directory_path() /
                          ("kt_attnbwd_workspace_" + std::to_string(getpid()) + ".db"))
                             .string();
  std::filesystem::remove(db);
  const auto tune = testing::run_cli(
      "tune --op attention-backward --shape b=4,h=16,s=4096,d=128 --causal --candidates 1", db);
  EXPECT_EQ(tune.status, 0) << tune.output;
  EXPECT_NE(tune.output.find("winner"), std::string::npos) << tune.output;
  std::filesystem::remove(db);
}

}  // namespace
}  // namespace kt
