// The embedded kernel templates compile with NVRTC (no GPU) for a sample of the search space:
// hand-picked and model-chosen configs, both layouts, every dtype pair, aligned and unaligned
// shapes, split-K, sm_90a and sm_80; plus the compile key, CompileError and ptxas report parsing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_model.hpp"
#include "core/gemm_problem.hpp"
#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/ptxas_report.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/gemm_builders.hpp"
#include "support/parallel_for.hpp"

namespace {

namespace gen = kt::gen;

using kt::testing::config;
using kt::testing::problem;
using kt::testing::shipped_sm90_configs;
using kt::testing::shipped_small_m_configs;

// How many times `needle` occurs in `text`.
std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

// The configs we ship as known-good starting points; they must compile cleanly everywhere.
const std::vector<kt::GemmConfig>& hand_picked() {
  static const std::vector<kt::GemmConfig> all = {
      config(128, 256, 32, 64, 64, 3), config(256, 128, 32, 64, 64, 3),
      config(128, 128, 32, 64, 64, 4), config(128, 128, 64, 64, 64, 3),
      config(64, 128, 32, 32, 64, 4),  config(64, 64, 64, 32, 32, 4),
      config(16, 128, 64, 16, 32, 4)};
  return all;
}

struct Case {
  kt::GemmProblem problem;
  kt::GemmConfig config;
  std::string arch;
  bool clean = true;  // zero spills and no ptxas performance warnings required
  // The model's register estimate lands in the same occupancy bucket as ptxas's count. Off for
  // the small-M family: its count moves by ~30 registers between nt and nn and between sm_80
  // and sm_90a for one config, more than a bucket; the tuner re-scores with ptxas's count.
  bool estimate_occupancy = true;

  std::string label() const { return kt::to_key(problem) + " " + kt::to_key(config) + " " + arch; }
};

// The profile whose arch a case targets.
const kt::DeviceDesc& profile_for(const std::string& arch) {
  return kt::device_profile(arch == "sm_80" ? "a100" : "h200");
}

struct Outcome {
  std::optional<gen::CompiledKernel> kernel;
  std::string error;
};

// Compiles every source, as many at a time as there are cores (NVRTC programs are independent).
std::vector<Outcome> compile_all(const std::vector<gen::GeneratedSource>& sources) {
  std::vector<Outcome> outcomes(sources.size());
  kt::testing::parallel_for(sources.size(), [&](std::size_t i) {
    try {
      outcomes[i].kernel = gen::compile(sources[i]);
    } catch (const kt::CompileError& e) {
      outcomes[i].error = e.log();
    } catch (const std::exception& e) {
      outcomes[i].error = e.what();
    }
  });
  return outcomes;
}

// What every successful GEMM compile must deliver.
void check_compiled(const Case& c, const gen::GeneratedSource& source, const Outcome& outcome) {
  SCOPED_TRACE(c.label());
  ASSERT_TRUE(outcome.kernel.has_value()) << outcome.error.substr(0, 4000);
  const gen::CompiledKernel& k = *outcome.kernel;
  // A cubin is an ELF image.
  ASSERT_GE(k.cubin.size(), 4u);
  EXPECT_EQ(std::string(k.cubin.data(), 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(k.arch, c.arch);
  EXPECT_EQ(k.compile_key, gen::compile_key(source));
  ASSERT_EQ(k.lowered_names.size(), source.name_expressions.size());
  for (const std::string& lowered : k.lowered_names)
    EXPECT_EQ(lowered.rfind("_Z", 0), 0u) << "not a mangled name: '" << lowered << "'";
  // ptxas reported the main kernel under its lowered name.
  const gen::KernelResources main = k.resources(0);
  EXPECT_GT(main.registers, 0) << k.log;
  EXPECT_LE(main.registers, 255);
  if (c.clean) {
    EXPECT_EQ(k.report.total_spill_bytes(), 0) << k.log;
    EXPECT_TRUE(k.report.performance_warnings.empty()) << k.log;
  }
  // The model sees registers only through occupancy: its estimate must give the same CTAs per
  // SM as the registers ptxas actually allocated.
  const kt::DeviceDesc& device = profile_for(c.arch);
  if (!c.estimate_occupancy) return;
  EXPECT_EQ(kt::estimate(c.problem, c.config, device).occupancy.ctas_per_sm,
            kt::estimate(c.problem, c.config, device, main.registers).occupancy.ctas_per_sm)
      << "estimated " << kt::estimated_registers(c.config) << " registers, ptxas used "
      << main.registers;
}

// Validates, generates, compiles in parallel and checks every case.
void compile_and_check(const std::vector<Case>& cases) {
  std::vector<gen::GeneratedSource> sources;
  for (const Case& c : cases) {
    const auto why = kt::validate(c.problem, c.config, profile_for(c.arch));
    ASSERT_FALSE(why.has_value()) << c.label() << ": " << *why;
    sources.push_back(gen::generate_gemm(c.problem, c.config, c.arch));
  }
  const std::vector<Outcome> outcomes = compile_all(sources);
  for (std::size_t i = 0; i < cases.size(); ++i) check_compiled(cases[i], sources[i], outcomes[i]);
}

}  // namespace

TEST(TemplatesCompile, HandPickedConfigsCompileCleanlyForBothLayouts) {
  std::vector<Case> cases;
  for (const kt::GemmConfig& c : hand_picked())
    for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
      cases.push_back({problem(4096, 4096, 4096, layout), c, "sm_90a"});
  compile_and_check(cases);
}

TEST(TemplatesCompile, EveryDTypePairCompilesForBothLayouts) {
  std::vector<Case> cases;
  for (kt::DType in : {kt::DType::kBF16, kt::DType::kFP16})
    for (kt::DType out : {kt::DType::kBF16, kt::DType::kFP16, kt::DType::kFP32})
      for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
        cases.push_back({problem(2048, 2048, 2048, layout, in, out),
                         config(128, 128, 32, 64, 64, 4), "sm_90a"});
  compile_and_check(cases);
}

TEST(TemplatesCompile, UnalignedShapesCompileTheScalarLoadPath) {
  // K = 4100 breaks 16-byte rows of A (and of B for nt); N = 4100 breaks B's rows for nn.
  const kt::GemmProblem shapes[] = {problem(4096, 4096, 4100, kt::Layout::kNT),
                                    problem(4096, 4100, 4096, kt::Layout::kNN),
                                    problem(127, 129, 65, kt::Layout::kNN)};
  std::vector<Case> cases;
  for (const kt::GemmProblem& p : shapes) {
    ASSERT_FALSE(p.vector_aligned()) << kt::to_key(p);
    for (const kt::GemmConfig& c : {config(128, 128, 32, 64, 64, 4), config(64, 64, 64, 32, 32, 4),
                                    config(16, 128, 64, 16, 32, 4)})
      cases.push_back({p, c, "sm_90a"});
  }
  compile_and_check(cases);
}

TEST(TemplatesCompile, SplitKAddsTheReduceKernel) {
  std::vector<Case> cases;
  for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
    for (kt::DType out : {kt::DType::kFP32, kt::DType::kBF16})
      cases.push_back({problem(512, 512, 32768, layout, kt::DType::kBF16, out),
                       config(128, 128, 32, 64, 64, 4, layout == kt::Layout::kNT ? 4 : 8),
                       "sm_90a"});
  // Unaligned K with split-K.
  cases.push_back({problem(500, 500, 30001, kt::Layout::kNT, kt::DType::kFP16, kt::DType::kFP16),
                   config(64, 64, 64, 32, 32, 4, 6), "sm_90a"});
  compile_and_check(cases);
  for (const Case& c : cases) {
    const gen::GeneratedSource s = gen::generate_gemm(c.problem, c.config, c.arch);
    ASSERT_EQ(s.name_expressions.size(), 2u) << c.label();
    EXPECT_EQ(s.name_expressions[1], kt::gemm_reduce_expression(c.problem));
  }
  // Without split-K there is only the main kernel.
  EXPECT_EQ(gen::generate_gemm(problem(512, 512, 32768), config(128, 128, 32, 64, 64, 4), "sm_90a")
                .name_expressions.size(),
            1u);
}

TEST(TemplatesCompile, Sm90OnUnalignedRowsAddsThePadKernel) {
  // Rows TMA cannot address and the producer does not copy (K % 8 != 0 in both layouts, nn with
  // odd N): the sm90 module holds the main kernel, then gemm_pad_rows; unsplit, split-K, swapped,
  // both 16-bit inputs.
  std::vector<Case> cases;
  for (kt::DType in : {kt::DType::kBF16, kt::DType::kFP16})
    for (const kt::GemmConfig& c :
         {kt::testing::sm90_config(128, 128, 4, 2), kt::testing::sm90_config(64, 64, 8, 1, 16),
          kt::parse_gemm_config_key("sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g8.sk4.swab")})
      for (const kt::GemmProblem& p : {problem(60, 1000, 32772, kt::Layout::kNT, in, in),
                                       problem(60, 1001, 32772, kt::Layout::kNN, in, in)})
        cases.push_back({p, c, "sm_90a"});
  compile_and_check(cases);
  for (const Case& c : cases) {
    const gen::GeneratedSource s = gen::generate_gemm(c.problem, c.config, c.arch);
    ASSERT_EQ(s.name_expressions.size(), 2u) << c.label();
    EXPECT_EQ(s.name_expressions[1], kt::gemm_pad_expression());
  }
  // Aligned rows: the main kernel alone.
  EXPECT_EQ(gen::generate_gemm(problem(108, 128, 32768, kt::Layout::kNN),
                               kt::testing::sm90_config(128, 128, 4, 2), "sm_90a")
                .name_expressions.size(),
            1u);
}

TEST(TemplatesCompile, Sm90CopiesNnRowsOfEvenN) {
  // nn's B with N % 8 != 0 but even: the producer warpgroup copies it (8-byte copies when N % 4
  // == 0, else 4), so the module is the main kernel alone, compiled without spills; one and two
  // consumers (whose producer holds 40 registers), split-K, stages one to four atoms deep,
  // swapped (the copied operand as the kernel's A). A cluster pair and stream-K still pad.
  std::vector<Case> cases;
  for (const char* key :
       {"sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk1", "sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk4",
        "sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g1.sk16", "sm90.bm64.bn64.bk256.s3.c1.e0.cl1.g8.sk1",
        "sm90.bm64.bn112.bk64.s9.c1.e0.cl1.g8.sk16.swab",
        "sm90.bm256.bn88.bk64.s4.c2.e0.cl1.g8.sk1.swab"})
    for (const kt::GemmProblem& p :
         {problem(108, 124, 32768, kt::Layout::kNN), problem(107, 334, 32768, kt::Layout::kNN)})
      cases.push_back({p, kt::parse_gemm_config_key(key), "sm_90a"});
  compile_and_check(cases);
  for (const Case& c : cases) {
    const gen::GeneratedSource s = gen::generate_gemm(c.problem, c.config, c.arch);
    ASSERT_EQ(s.name_expressions.size(), 1u) << c.label();
    const int bytes = c.problem.n % 4 == 0 ? 8 : 4;
    EXPECT_EQ(kt::sm90_mn_copy_bytes(c.problem, c.config), bytes) << c.label();
    EXPECT_TRUE(s.name_expressions[0].ends_with(fmt::format(", {}>", bytes))) << c.label();
  }
  for (const char* key : {"sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk1",
                          "sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1.st"}) {
    const kt::GemmProblem p = problem(108, 124, 32768, kt::Layout::kNN);
    const kt::GemmConfig c = kt::parse_gemm_config_key(key);
    EXPECT_EQ(kt::sm90_mn_copy_bytes(p, c), 0) << key;
    EXPECT_EQ(gen::generate_gemm(p, c, "sm_90a").name_expressions.size(), 2u) << key;
  }
}

TEST(TemplatesCompile, ModelTopConfigsCompileAndTheServedOneIsSpillFree) {
  // For an untuned shape the runtime serves the first of the model's top picks whose kernel
  // does not spill (the model cannot see spills; ptxas can): every pick must compile, and one of
  // the first kModelDefaultTries must be spill-free.
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem shapes[] = {problem(4096, 4096, 4096),
                                    problem(16, 4096, 4096),
                                    problem(127, 129, 65),
                                    problem(512, 512, 32768),
                                    problem(8192, 28672, 4096),
                                    problem(4100, 4096, 4096),
                                    problem(2048, 2048, 2048, kt::Layout::kNN)};
  constexpr std::size_t kModelDefaultTries = 4;
  for (const kt::GemmProblem& p : shapes) {
    std::vector<gen::GeneratedSource> sources;
    for (const std::string& c : kt::rt::model_ranked_configs(kt::op_spec("gemm"), kt::to_key(p),
                                                             h200, 64 << 20, kModelDefaultTries))
      sources.push_back(gen::generate_gemm(p, kt::parse_gemm_config_key(c), "sm_90a"));
    const std::vector<Outcome> outcomes = compile_all(sources);
    bool spill_free = false;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      ASSERT_TRUE(outcomes[i].kernel.has_value()) << sources[i].name << ": " << outcomes[i].error;
      spill_free = spill_free || outcomes[i].kernel->report.total_spill_bytes() == 0;
    }
    EXPECT_TRUE(spill_free) << kt::to_key(p) << ": all of the model's first picks spill";
  }
}

TEST(TemplatesCompile, HandPickedConfigsCompileForSm80) {
  std::vector<Case> cases;
  for (const kt::GemmConfig& c : hand_picked())
    cases.push_back({problem(4096, 4096, 4096), c, "sm_80"});
  cases.push_back({problem(4096, 4100, 4096, kt::Layout::kNN, kt::DType::kFP16, kt::DType::kFP32),
                   config(128, 128, 32, 64, 64, 4), "sm_80"});
  compile_and_check(cases);
}

TEST(TemplatesCompile, EdgeConfigsThatValidateAcceptsCompile) {
  // validate() is the authority on combinations: extremes it accepts must compile too.
  std::vector<Case> cases = {
      {problem(64, 64, 64), config(16, 16, 32, 16, 16, 2), "sm_90a", false},  // one warp
      {problem(4096, 4096, 4096), config(256, 32, 64, 64, 32, 4), "sm_90a", false},
      {problem(4096, 4096, 4096, kt::Layout::kNN), config(32, 256, 32, 32, 64, 3), "sm_90a", false},
      {problem(4096, 4096, 4096, kt::Layout::kNN), config(128, 256, 64, 64, 64, 3), "sm_90a",
       false},
      {problem(4096, 4096, 4096), config(64, 64, 32, 64, 64, 8), "sm_90a", false},  // 8 stages
  };
  compile_and_check(cases);
}

TEST(CheckKernels, CompileForEveryDTypePairAndLayout) {
  std::vector<gen::GeneratedSource> sources;
  std::vector<std::string> labels;
  for (kt::DType in : {kt::DType::kBF16, kt::DType::kFP16})
    for (kt::DType out : {kt::DType::kBF16, kt::DType::kFP16, kt::DType::kFP32})
      for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
        const kt::GemmProblem p = problem(256, 256, 256, layout, in, out);
        sources.push_back(gen::generate_gemm_check(p, "sm_90a"));
        labels.push_back(kt::to_key(p));
      }
  // One on sm_80 as well.
  sources.push_back(gen::generate_gemm_check(problem(256, 256, 256), "sm_80"));
  labels.push_back("sm_80");
  const std::vector<Outcome> outcomes = compile_all(sources);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    ASSERT_EQ(sources[i].name_expressions.size(), std::size_t(gen::kNumGemmCheckKernels));
    ASSERT_TRUE(outcomes[i].kernel.has_value()) << outcomes[i].error.substr(0, 4000);
    const gen::CompiledKernel& k = *outcomes[i].kernel;
    EXPECT_FALSE(k.cubin.empty());
    ASSERT_EQ(k.lowered_names.size(), std::size_t(gen::kNumGemmCheckKernels));
    for (const std::string& lowered : k.lowered_names) EXPECT_FALSE(lowered.empty());
    EXPECT_EQ(k.report.total_spill_bytes(), 0) << k.log;
  }
}

// The benchmark's L2 flush reads through L2 only (ld.global.cg) and keeps its loads.
TEST(CheckKernels, L2FlushReadsThroughL2ForSm90aAndSm80) {
  for (const std::string arch : {"sm_90a", "sm_80"}) {
    SCOPED_TRACE(arch);
    const gen::CompiledKernel k = gen::compile(gen::generate_l2_flush(arch));
    ASSERT_EQ(k.lowered_names.size(), 1u);
    EXPECT_FALSE(k.cubin.empty());
    EXPECT_EQ(k.report.total_spill_bytes(), 0) << k.log;
    const std::string ptx = gen::compile_to_ptx(gen::generate_l2_flush(arch));
    EXPECT_NE(ptx.find("ld.global.cg.v4.u32"), std::string::npos);
    EXPECT_EQ(ptx.find("st.global.v4"), std::string::npos) << "the flush must not write the buffer";
  }
}

TEST(TemplatesCompile, ShippedSm90ConfigsCompileCleanlyForBothLayoutsAndDTypes) {
  // Zero spills and no C75xx warning (wgmma serialization, ignored setmaxnreg) for every shipped
  // sm90 config, nt and nn where validate allows the layout (the 144-column tile is nt-only),
  // bf16 and fp16; every shipped config serves nt.
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  std::vector<Case> cases;
  for (const kt::GemmConfig& c : shipped_sm90_configs())
    for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
      for (kt::DType dtype : {kt::DType::kBF16, kt::DType::kFP16}) {
        const kt::GemmProblem p = problem(4096, 4096, 4096, layout, dtype, dtype);
        const auto why = kt::validate(p, c, h200);
        EXPECT_FALSE(why && layout == kt::Layout::kNT) << kt::to_key(c) << ": " << *why;
        if (!why) cases.push_back({p, c, "sm_90a"});
      }
  compile_and_check(cases);
}

TEST(TemplatesCompile, Sm90WritesFp32AndMixedOutputs) {
  std::vector<Case> cases;
  for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
    cases.push_back({problem(2048, 2048, 2048, layout, kt::DType::kBF16, kt::DType::kFP32),
                     kt::testing::sm90_config(128, 256, 4, 2), "sm_90a"});
    cases.push_back({problem(2048, 2048, 2048, layout, kt::DType::kBF16, kt::DType::kFP16),
                     kt::testing::sm90_config(128, 128, 4, 1), "sm_90a"});
    // The TMA-store epilogue stages FP32 slabs of 32 columns (8-byte stores, not stmatrix).
    cases.push_back({problem(2048, 2048, 2048, layout, kt::DType::kBF16, kt::DType::kFP32),
                     kt::testing::sm90_config(128, 256, 3, 2, 1, 4, 2), "sm_90a"});
    cases.push_back({problem(2048, 2048, 2048, layout, kt::DType::kFP16, kt::DType::kFP32),
                     kt::testing::sm90_config(64, 128, 6, 1, 1, 4, 1), "sm_90a"});
  }
  // 144 FP32 columns: two unswizzled 72-column (288-byte) slabs, 8-byte stores (nt only).
  cases.push_back({problem(1536, 1536, 2048, kt::Layout::kNT, kt::DType::kBF16, kt::DType::kFP32),
                   kt::testing::sm90_config(128, 144, 4, 2, 1, 2), "sm_90a"});
  compile_and_check(cases);
}

TEST(Ptx, TheSm90FamilyUsesWgmmaTmaMbarriersAndSetmaxnreg) {
  for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
    SCOPED_TRACE(kt::to_string(layout));
    const std::string ptx = gen::compile_to_ptx(gen::generate_gemm(
        problem(4096, 4096, 4096, layout), kt::testing::sm90_config(128, 256, 4, 2), "sm_90a"));
    EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d"), std::string::npos);
    EXPECT_NE(ptx.find("mbarrier.try_wait.parity"), std::string::npos);
    EXPECT_NE(ptx.find("prefetch.tensormap"), std::string::npos);
    EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 232"), std::string::npos);
    EXPECT_NE(ptx.find("setmaxnreg.dec.sync.aligned.u32 40"), std::string::npos);
    EXPECT_EQ(ptx.find("mma.sync"), std::string::npos) << "the sm80 path leaked in";
    // The default epilogue stores directly; no cluster, no multicast.
    EXPECT_EQ(ptx.find("cp.async.bulk.tensor.2d.global.shared"), std::string::npos);
    EXPECT_EQ(ptx.find("multicast"), std::string::npos);
  }
}

TEST(Ptx, Sm90WithoutWarpSpecializationLoadsFromAConsumerThreadWithoutSetmaxnreg) {
  // 256 threads for two consumers (no producer warpgroup), the same wgmma and TMA loads, and no
  // register hand-over between warpgroups.
  const kt::GemmConfig c = kt::testing::unspecialized(kt::testing::sm90_config(128, 256, 4, 2));
  const std::string ptx =
      gen::compile_to_ptx(gen::generate_gemm(problem(4096, 4096, 4096), c, "sm_90a"));
  EXPECT_NE(ptx.find(".maxntid 256"), std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global"), std::string::npos);
  EXPECT_NE(ptx.find("mbarrier.arrive.expect_tx"), std::string::npos);
  EXPECT_EQ(ptx.find("setmaxnreg"), std::string::npos);
  EXPECT_NE(
      gen::compile_to_ptx(gen::generate_gemm(problem(4096, 4096, 4096),
                                             kt::testing::sm90_config(128, 256, 4, 2), "sm_90a"))
          .find(".maxntid 384"),
      std::string::npos);
}

TEST(Ptx, TheSm90TmaStoreEpilogueAndClustersUseBulkStoresMulticastAndRemoteArrivals) {
  for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
    SCOPED_TRACE(kt::to_string(layout));
    const std::string ptx = gen::compile_to_ptx(
        gen::generate_gemm(problem(4096, 4096, 4096, layout),
                           kt::testing::sm90_config(128, 256, 4, 2, 1, 2, 2), "sm_90a"));
    EXPECT_NE(ptx.find("wgmma.mma_async"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"),
              std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.commit_group"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.wait_group.read"), std::string::npos);
    EXPECT_NE(ptx.find("fence.proxy.async.shared::cta"), std::string::npos);
    EXPECT_NE(ptx.find("stmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos);
    EXPECT_NE(ptx.find(".multicast::cluster"), std::string::npos);
    EXPECT_NE(ptx.find("mapa.shared::cluster"), std::string::npos);
    EXPECT_NE(ptx.find("mbarrier.arrive.shared::cluster.b64"), std::string::npos);
    // One cluster barrier, after the barriers' initialization: pairs end with the producer
    // waiting for its stages' releases, since any barrier at exit cost them ~2 us of main loop
    // at 1536^2 on the H200.
    EXPECT_EQ(occurrences(ptx, "barrier.cluster.wait"), 1u);
    // Cluster-scope mbarrier semantics put MEMBARs on the consumers' wgmma issue path (~30%
    // slower cl2 configs on the H200); the ring needs only CTA scope.
    EXPECT_EQ(ptx.find("mbarrier.arrive.release.cluster"), std::string::npos);
    EXPECT_EQ(ptx.find("acquire.cluster.shared"), std::string::npos);
  }
}

TEST(Ptx, Sm90SplitKReducesInTheKernelWithEpochFlags) {
  // One kernel (no reduce), GPU-scope release/acquire of the ready flags (relaxed polls and a
  // fence in the distributed mode), the launch epoch's acq_rel arrival, a backoff, and no reduce
  // kernel's name.
  for (const kt::GemmConfig& c : {kt::testing::sm90_config(128, 256, 4, 2, 16),
                                  kt::testing::sm90_config(128, 192, 4, 2, 4, 2, 2)}) {
    SCOPED_TRACE(kt::to_key(c));
    const gen::GeneratedSource source = gen::generate_gemm(problem(1536, 1536, 8192), c, "sm_90a");
    ASSERT_EQ(source.name_expressions.size(), 1u);
    const std::string ptx = gen::compile_to_ptx(source);
    EXPECT_NE(ptx.find("st.release.gpu.global.b32"), std::string::npos);
    EXPECT_NE(ptx.find("ld.acquire.gpu.global.b32"), std::string::npos);
    EXPECT_NE(ptx.find("atom.acq_rel.gpu.global.add.u32"), std::string::npos);
    EXPECT_NE(ptx.find("ld.relaxed.gpu.global.b32"), std::string::npos);
    EXPECT_NE(ptx.find("nanosleep.u32"), std::string::npos);
    EXPECT_NE(ptx.find("fence.acq_rel.gpu"), std::string::npos);  // after the batched flag polls
    EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos);
    EXPECT_NE(ptx.find("ld.global.cg.v4.f32"), std::string::npos);
    EXPECT_EQ(ptx.find("gemm_splitk_reduce"), std::string::npos);
  }
}

TEST(Ptx, Sm90StreamKPublishesByFlagsAndBulkLoadsThePeersPartialTiles) {
  // Pieces store their partial tiles (16-byte stores) and arrive on an mbarrier; a producer
  // thread releases the flag at GPU scope; the owner acquires it, fences the proxies and
  // bulk-loads the peer's tile over the ring; the launch epoch's acq_rel arrival; one kernel.
  const kt::GemmConfig c = kt::testing::streamed(kt::testing::sm90_config(128, 256, 4, 2, 1, 2));
  const gen::GeneratedSource source = gen::generate_gemm(problem(8192, 8192, 8192), c, "sm_90a");
  ASSERT_EQ(source.name_expressions.size(), 1u);
  const std::string ptx = gen::compile_to_ptx(source);
  EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos);
  EXPECT_NE(ptx.find("st.release.gpu.global.b32"), std::string::npos);
  EXPECT_NE(ptx.find("ld.acquire.gpu.global.b32"), std::string::npos);
  EXPECT_NE(ptx.find("atom.acq_rel.gpu.global.add.u32"), std::string::npos);
  EXPECT_NE(ptx.find("mbarrier.arrive.shared::cta.b64"), std::string::npos);
  EXPECT_NE(ptx.find("fence.proxy.async.global"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"),
            std::string::npos);
}

TEST(Ptx, TheSm90NarrowTilesStoreHalfTileSlabsByTma) {
  // 144 and 32 columns of 16-bit C: two unswizzled half-tile slabs, written by 4-byte shared
  // stores (not stmatrix, whose 16-byte rows the 128B swizzle's chunks need) and TMA-stored.
  for (const kt::GemmConfig& c : {kt::testing::sm90_config(128, 144, 5, 2, 1, 2),
                                  kt::testing::sm90_config(64, 32, 12, 1, 1, 2)}) {
    SCOPED_TRACE(kt::to_key(c));
    const std::string ptx =
        gen::compile_to_ptx(gen::generate_gemm(problem(1536, 1536, 8192), c, "sm_90a"));
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"),
              std::string::npos);
    EXPECT_NE(ptx.find("st.shared.b32"), std::string::npos);
    EXPECT_EQ(ptx.find("stmatrix"), std::string::npos);
  }
}

TEST(Ptx, Sm90SwapAbStoresTheTransposedProductInPairsAfterAWarpTranspose) {
  // 16 tokens on the wgmma N side (m64n16k16), loaded by TMA like any operand. C^T's pairs of
  // adjacent columns lie ldc apart in C, so each 8 x 8 block of 16-bit results is transposed
  // across the warp first (movmatrix) and written as 4-byte pairs of C's columns (2-byte stores
  // at C's edges and where its rows are unaligned); FP32 C is written element by element.
  const kt::GemmProblem decode = problem(16, 4096, 4096);
  const kt::GemmConfig swapped = kt::testing::swapped(kt::testing::sm90_config(64, 16, 12, 1));
  const std::string ptx = gen::compile_to_ptx(gen::generate_gemm(decode, swapped, "sm_90a"));
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global"), std::string::npos);
  EXPECT_NE(ptx.find("movmatrix.sync.aligned.m8n8.trans.b16"), std::string::npos);
  EXPECT_NE(ptx.find("st.global.u32"), std::string::npos);
  EXPECT_NE(ptx.find("st.global.u16"), std::string::npos);
  const std::string fp32 = gen::compile_to_ptx(gen::generate_gemm(
      problem(16, 4096, 4096, kt::Layout::kNT, kt::DType::kBF16, kt::DType::kFP32), swapped,
      "sm_90a"));
  EXPECT_EQ(fp32.find("movmatrix"), std::string::npos);
  EXPECT_NE(fp32.find("st.global.f32"), std::string::npos);
  EXPECT_EQ(fp32.find("st.global.v2.f32"), std::string::npos);
  // nn: the caller's K x N B is the kernel's M-major A, read through wgmma's A transpose bit
  // (the immediates after the scale flags: transpose A, transpose B).
  const std::string nn = gen::compile_to_ptx(
      gen::generate_gemm(problem(16, 4096, 4096, kt::Layout::kNN), swapped, "sm_90a"));
  EXPECT_NE(nn.find("p, 1, 1, 1, 0;"), std::string::npos);
  EXPECT_EQ(ptx.find("p, 1, 1, 1, 0;"), std::string::npos);
  EXPECT_NE(ptx.find("p, 1, 1, 0, 0;"), std::string::npos);
}

TEST(Ptx, Sm90MultiAtomStagesLoadOneBoxPerAtomOfEachOperand) {
  // A stage 64, 128 or 256 deep along K: 1, 2 or 4 TMA boxes of A and as many of B per stage
  // (unrolled), and 4 k16 wgmma steps per atom.
  const kt::GemmProblem decode = problem(16, 4096, 4096);
  for (const int tile_k : {64, 128, 256}) {
    SCOPED_TRACE(tile_k);
    const std::string ptx =
        gen::compile_to_ptx(gen::generate_gemm(decode,
                                               kt::testing::swapped(kt::testing::deep_stages(
                                                   kt::testing::sm90_config(64, 16, 4, 1), tile_k)),
                                               "sm_90a"));
    EXPECT_EQ(occurrences(ptx, "cp.async.bulk.tensor.2d"), std::size_t(2 * tile_k / 64));
    EXPECT_EQ(occurrences(ptx, "wgmma.mma_async.sync.aligned.m64n16k16"), std::size_t(tile_k / 16));
  }
}

TEST(Ptx, Sm90MultiAtomStagesWithNnLoadOneBoxPerMnAtom) {
  // nn: an M- or N-major operand's box spans the stage's whole depth, so a stage 64, 128 or 256
  // deep loads one box per 64 columns of it and as many as the K atoms of the K-major one, and
  // its wgmma steps 4 k16 slices per atom as with nt. Swapped 64 x 16: A (the caller's B)
  // M-major, one box; unswapped 64 x 128: A K-major, B N-major in two boxes.
  const kt::GemmProblem decode = problem(16, 4096, 4096, kt::Layout::kNN);
  for (const int tile_k : {64, 128, 256}) {
    SCOPED_TRACE(tile_k);
    const std::string swapped =
        gen::compile_to_ptx(gen::generate_gemm(decode,
                                               kt::testing::swapped(kt::testing::deep_stages(
                                                   kt::testing::sm90_config(64, 16, 4, 1), tile_k)),
                                               "sm_90a"));
    EXPECT_EQ(occurrences(swapped, "cp.async.bulk.tensor.2d"), std::size_t(1 + tile_k / 64));
    EXPECT_EQ(occurrences(swapped, "wgmma.mma_async.sync.aligned.m64n16k16"),
              std::size_t(tile_k / 16));
    const std::string unswapped = gen::compile_to_ptx(gen::generate_gemm(
        problem(256, 4096, 4096, kt::Layout::kNN),
        kt::testing::deep_stages(kt::testing::sm90_config(64, 128, 4, 1), tile_k), "sm_90a"));
    EXPECT_EQ(occurrences(unswapped, "wgmma.mma_async.sync.aligned.m64n128k16"),
              std::size_t(tile_k / 16));
  }
}

TEST(Ptx, Sm90ClusterSplitKReducesThroughDistributedSharedMemory) {
  // The splits of a tile in one cluster: partial sums staged in shared memory, read from the
  // peers (mapa + ld.shared::cluster) between cluster barriers; no flags, no epoch, no L2
  // partial sums.
  for (const kt::GemmConfig& c : {kt::testing::sm90_cluster_split_config(128, 128, 4, 2, 8),
                                  kt::testing::sm90_cluster_split_config(64, 32, 12, 1, 4)}) {
    SCOPED_TRACE(kt::to_key(c));
    const std::string ptx =
        gen::compile_to_ptx(gen::generate_gemm(problem(512, 512, 32768), c, "sm_90a"));
    EXPECT_NE(ptx.find("st.shared.v4.f32"), std::string::npos);
    EXPECT_NE(ptx.find("mapa.shared::cluster.u32"), std::string::npos);
    EXPECT_NE(ptx.find("ld.shared::cluster.v4.f32"), std::string::npos);
    EXPECT_NE(ptx.find("barrier.cluster.arrive.release"), std::string::npos);
    EXPECT_EQ(ptx.find("st.release.gpu"), std::string::npos);
    EXPECT_EQ(ptx.find("atom.acq_rel.gpu"), std::string::npos);
    EXPECT_EQ(ptx.find("ld.global.cg.v4.f32"), std::string::npos);
    EXPECT_EQ(ptx.find("multicast"), std::string::npos);
  }
}

TEST(Ptx, Sm90PhaseMarksExistOnlyWithKtTrace) {
  // `kerntune trace` compiles with -DKT_TRACE: %globaltimer stamps, each CTA's %smid and its SM's
  // %clock64; every tuned or served kernel (no define) has none of them.
  const kt::GemmConfig c = kt::testing::sm90_config(128, 128, 4, 2, 4);
  gen::GeneratedSource source = gen::generate_gemm(problem(512, 512, 8192), c, "sm_90a");
  const std::string plain = gen::compile_to_ptx(source);
  EXPECT_EQ(plain.find("globaltimer"), std::string::npos);
  EXPECT_EQ(plain.find("%smid"), std::string::npos);
  EXPECT_EQ(plain.find("%clock64"), std::string::npos);
  source.options.push_back("-DKT_TRACE=1");
  const std::string traced = gen::compile_to_ptx(source);
  EXPECT_NE(traced.find("%globaltimer"), std::string::npos);
  EXPECT_NE(traced.find("%smid"), std::string::npos);
  EXPECT_NE(traced.find("%clock64"), std::string::npos);
}

TEST(TemplatesCompile, Sm90SplitKConfigsCompileWithoutSpillsForTheTwoDeepShapes) {
  // The configs the model ranks first for the split-K shapes, the brief's keys and the H200's
  // best at 512 x 512 x 32768 (s6 e2 sk8), with both layouts and FP32 output: zero spills with
  // both reduction paths in one kernel (the serial reducer adds its partial tiles into the 128
  // accumulators of a 128 x 256 tile within the 168-register launch cap; the distributed one
  // keeps every accumulator live through its stripe's predicated quads). 256 x 128 has two m64
  // tiles per consumer; bn64 sk16 has more splits than quads.
  std::vector<Case> cases;
  for (const char* key :
       {"sm90.bm128.bn192.bk64.s4.c2.e2.cl1.g8.sk4", "sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk16",
        "sm90.bm128.bn128.bk64.s4.c2.e2.cl2.g8.sk8", "sm90.bm128.bn64.bk64.s4.c2.e0.cl2.g8.sk4",
        "sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8", "sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk8",
        "sm90.bm256.bn128.bk64.s4.c2.e1.cl2.g1.sk3", "sm90.bm128.bn64.bk64.s4.c2.e0.cl1.g8.sk16",
        "sm90.bm128.bn128.bk64.s4.c2.e0.clk8.g8.sk8", "sm90.bm128.bn256.bk64.s4.c2.e0.clk4.g8.sk4"})
    for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
      const kt::GemmConfig c = kt::parse_gemm_config_key(key);
      cases.push_back({problem(1536, 1536, 8192, layout), c, "sm_90a"});
      cases.push_back(
          {problem(512, 512, 32768, layout, kt::DType::kFP16, kt::DType::kFP32), c, "sm_90a"});
    }
  compile_and_check(cases);
}

TEST(Ptx, TheSm80FamilyUsesMmaSyncLdmatrixAndCpAsync) {
  const std::string ptx = gen::compile_to_ptx(
      gen::generate_gemm(problem(4096, 4096, 4096), config(128, 128, 32, 64, 64, 4), "sm_90a"));
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16"), std::string::npos);
  EXPECT_NE(ptx.find("ldmatrix.sync"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async"), std::string::npos);
  EXPECT_NE(ptx.find(".entry"), std::string::npos);
}

TEST(TemplatesCompile, ShippedSmallMConfigsCompileCleanlyForSm90aAndSm80) {
  // Zero spills for every shipped small-M config, nt and (where warp_n is 64) nn, on both
  // targets; split-K configs bring the reduce kernel.
  std::vector<Case> cases;
  for (const kt::GemmConfig& c : shipped_small_m_configs())
    for (const std::string arch : {"sm_90a", "sm_80"})
      for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
        const kt::GemmProblem p = problem(16, 4096, 4096, layout);
        if (kt::validate(p, c, profile_for(arch))) continue;  // nn needs warp_n 64
        cases.push_back({p, c, arch, true, false});
      }
  EXPECT_GE(cases.size(), 2 * shipped_small_m_configs().size());
  compile_and_check(cases);
}

TEST(TemplatesCompile, SmallMWritesEveryOutputDTypeFromBothInputs) {
  std::vector<Case> cases;
  for (kt::DType in : {kt::DType::kBF16, kt::DType::kFP16})
    for (kt::DType out : {kt::DType::kBF16, kt::DType::kFP16, kt::DType::kFP32})
      for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
        cases.push_back({problem(3, 4104, 4096, layout, in, out),
                         kt::small_m_config(8, 64, 64, 64, 4), "sm_90a", true, false});
  compile_and_check(cases);
}

TEST(Ptx, TheSmallMFamilyStreamsBIntoMmaSyncWithoutStaging) {
  for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
    SCOPED_TRACE(kt::to_string(layout));
    const std::string ptx = gen::compile_to_ptx(gen::generate_gemm(
        problem(16, 4096, 4096, layout), kt::small_m_config(16, 64, 64, 64, 4), "sm_80"));
    EXPECT_NE(ptx.find("ld.global.nc.L1::no_allocate.L2::256B.v4.u32"), std::string::npos);
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16"), std::string::npos);
    EXPECT_NE(ptx.find("prefetch.global.L1"), std::string::npos) << "A is prefetched into L1";
    EXPECT_EQ(ptx.find("cp.async"), std::string::npos) << "B is not staged in shared memory";
    EXPECT_EQ(ptx.find("ldmatrix"), std::string::npos);
    // nn pairs rows of B with byte permutes; nt needs none.
    EXPECT_EQ(ptx.find("prmt.b32") != std::string::npos, layout == kt::Layout::kNN);
  }
}

TEST(CompileKey, StableForIdenticalInputAndSensitiveToEveryPart) {
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  const kt::GemmConfig c = config(128, 128, 32, 64, 64, 4);
  const gen::GeneratedSource base = gen::generate_gemm(p, c, "sm_90a");
  const std::string key = gen::compile_key(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;
  // Identical input: regenerated, the same key.
  EXPECT_EQ(gen::compile_key(gen::generate_gemm(p, c, "sm_90a")), key);

  EXPECT_NE(gen::compile_key(gen::generate_gemm(p, c, "sm_80")), key);
  EXPECT_NE(gen::compile_key(gen::generate_gemm(p, config(128, 128, 32, 64, 64, 3), "sm_90a")),
            key);
  EXPECT_NE(gen::compile_key(gen::generate_gemm(p, config(128, 128, 64, 64, 64, 4), "sm_90a")),
            key);
  EXPECT_NE(gen::compile_key(gen::generate_gemm(
                problem(4096, 4096, 4096, kt::Layout::kNT, kt::DType::kBF16, kt::DType::kFP32), c,
                "sm_90a")),
            key);
  EXPECT_NE(
      gen::compile_key(gen::generate_gemm(problem(4096, 4096, 4096, kt::Layout::kNN), c, "sm_90a")),
      key);
  // Each part of the source on its own.
  gen::GeneratedSource changed = base;
  changed.code += "\n";
  EXPECT_NE(gen::compile_key(changed), key);
  changed = base;
  changed.options.push_back("-lineinfo");
  EXPECT_NE(gen::compile_key(changed), key);
  changed = base;
  changed.name_expressions[0] += " ";
  EXPECT_NE(gen::compile_key(changed), key);
}

TEST(CompileError, CarriesTheLogTheOptionsAndTheSourceName) {
  gen::GeneratedSource broken =
      gen::generate_gemm(problem(256, 256, 256), config(128, 128, 32, 64, 64, 4), "sm_90a");
  broken.name = "broken_program";
  broken.code = "this is not C++";
  broken.name_expressions.clear();
  try {
    gen::compile(broken);
    FAIL() << "NVRTC accepted 'this is not C++'";
  } catch (const kt::CompileError& e) {
    EXPECT_EQ(e.kind(), kt::ErrorKind::kCompile);
    EXPECT_FALSE(e.log().empty());
    EXPECT_EQ(e.source_name(), "broken_program");
    const auto& options = e.options();
    EXPECT_NE(std::find(options.begin(), options.end(), "--gpu-architecture=sm_90a"), options.end())
        << "options do not name the arch";
    EXPECT_NE(std::string(e.what()).find("broken_program"), std::string::npos) << e.what();
  }
}

TEST(PtxasReport, ParsesResourcesAndFlagsSerializationWarnings) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_ZN2kt9gemm_mainEv' for 'sm_90a'\n"
      "ptxas info    : Function properties for _ZN2kt9gemm_mainEv\n"
      "    8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 384 bytes smem, 400 bytes cmem[0]\n"
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to insufficient register resources for the wgmma pipeline in the function "
      "'_ZN2kt9gemm_mainEv'\n"
      "ptxas info    : Compiling entry function '_ZN2kt6reduceEv' for 'sm_90a'\n"
      "ptxas info    : Function properties for _ZN2kt6reduceEv\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers, 400 bytes cmem[0]\n";
  const gen::PtxasReport report = gen::parse_ptxas_report(log);
  ASSERT_EQ(report.kernels.size(), 2u);
  const gen::KernelResources* main = report.find("_ZN2kt9gemm_mainEv");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->registers, 168);
  EXPECT_EQ(main->stack_frame_bytes, 8);
  EXPECT_EQ(main->spill_store_bytes, 12);
  EXPECT_EQ(main->spill_load_bytes, 16);
  EXPECT_EQ(main->smem_static_bytes, 384);
  const gen::KernelResources* reduce = report.find("_ZN2kt6reduceEv");
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->registers, 32);
  EXPECT_EQ(reduce->smem_static_bytes, 0);
  EXPECT_EQ(reduce->spill_store_bytes + reduce->spill_load_bytes, 0);
  EXPECT_EQ(report.total_spill_bytes(), 12 + 16);
  EXPECT_EQ(report.find("_Z7missingv"), nullptr);
  ASSERT_EQ(report.performance_warnings.size(), 1u);
  EXPECT_NE(report.performance_warnings[0].find("C7515"), std::string::npos);
}

TEST(PtxasReport, EmptyLogHasNoKernelsAndNoWarnings) {
  const gen::PtxasReport report = gen::parse_ptxas_report("");
  EXPECT_TRUE(report.kernels.empty());
  EXPECT_TRUE(report.performance_warnings.empty());
  EXPECT_EQ(report.total_spill_bytes(), 0);
}
