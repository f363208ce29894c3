// The attention templates under NVRTC, no GPU needed: every config of the space (fa2 and fa3)
// compiles for sm_90a on every head dim; the shipped fa2 configs (the tuned winners on the H200)
// compile with zero spill bytes in the variant the tuner measured, and with LSE and for sm_80;
// the shipped fa3 configs compile for sm_90a with zero spill bytes on both masks and dtypes, and
// their PTX is wgmma fed by TMA; the check kernels compile. (A config that spills may exist in
// the space: the tuner measures it and the runtime's model default skips it.)
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>
#include <vector>

#include "core/attention_config.hpp"
#include "core/error.hpp"
#include "generator/embedded_templates.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "ops/attention/attention_source.hpp"
#include "support/attention_builders.hpp"

namespace kt {
namespace {

struct Case {
  AttentionProblem problem;
  AttentionConfig config;
  bool lse;
  std::string arch;
};

AttentionProblem problem(std::int64_t d, DType dtype, bool causal) {
  AttentionProblem p;
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.seqlen_q = p.seqlen_k = 1000;
  p.head_dim = d;
  p.dtype = dtype;
  p.causal = causal;
  return p;
}

// Compiles every case; returns the failures (empty when all compile, and, with
// require_spill_free, none spills).
std::vector<std::string> compile_all(const std::vector<Case>& cases, bool require_spill_free) {
  std::vector<std::future<std::string>> results;
  for (const Case& c : cases)
    results.push_back(std::async(std::launch::async, [c, require_spill_free] {
      const gen::GeneratedSource s = gen::generate_attention(c.problem, c.config, c.lse, c.arch);
      const std::string label =
          to_key(c.problem) + " " + to_key(c.config) + " " + c.arch + (c.lse ? " lse" : "");
      try {
        const gen::CompiledKernel k = gen::compile(s);
        if (k.cubin.empty()) return label + ": empty cubin";
        if (require_spill_free && k.report.total_spill_bytes() != 0)
          return label + ": spills " + std::to_string(k.report.total_spill_bytes()) + " bytes";
        if (k.resources(0).registers == 0) return label + ": no ptxas report for the kernel";
        return std::string();
      } catch (const CompileError& e) {
        return label + ": " + e.log().substr(0, 2000);
      }
    }));
  std::vector<std::string> failures;
  for (auto& r : results)
    if (std::string f = r.get(); !f.empty()) failures.push_back(f);
  return failures;
}

TEST(AttentionTemplates, EveryConfigOfTheSpaceCompilesForSm90aPerHeadDim) {
  const DeviceDesc& h200 = device_profile("h200");
  for (std::int64_t d : {64, 96, 128, 256}) {
    std::vector<Case> cases;
    for (const AttentionConfig& c :
         enumerate_attention_configs(problem(d, DType::kBF16, true), h200))
      cases.push_back({problem(d, DType::kBF16, true), c, true, "sm_90a"});
    ASSERT_FALSE(cases.empty()) << "d=" << d;
    const auto failures = compile_all(cases, false);
    EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
  }
}

TEST(AttentionTemplates, ShippedConfigsCompileSpillFreeAndForSm80) {
  // The winners of the H200 run per head dim and mask, in the variant the tuner measured (no
  // LSE): bench/results/2026-11-30-h200-attention-final/tune.log.
  const struct {
    std::int64_t d;
    bool causal;
    AttentionConfig config;
  } shipped[] = {
      {64, false, {128, 64, 4, 2}},  {64, true, {128, 64, 4, 2}},   {64, true, {64, 64, 4, 1}},
      {128, false, {128, 32, 4, 1}}, {128, false, {128, 32, 4, 2}}, {128, false, {64, 128, 4, 1}},
      {128, true, {128, 128, 8, 2}}, {128, true, {64, 128, 4, 1}},  {128, true, {64, 32, 4, 2}},
      {256, false, {128, 64, 8, 1}}, {256, true, {64, 64, 4, 1}}};
  std::vector<Case> spill_free, compiles;
  for (const auto& s : shipped)
    for (DType dtype : {DType::kBF16, DType::kFP16}) {
      spill_free.push_back({problem(s.d, dtype, s.causal), s.config, false, "sm_90a"});
      compiles.push_back({problem(s.d, dtype, s.causal), s.config, true, "sm_90a"});
      compiles.push_back({problem(s.d, dtype, s.causal), s.config, false, "sm_80"});
    }
  auto failures = compile_all(spill_free, true);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
  failures = compile_all(compiles, false);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
}

TEST(AttentionTemplates, ShippedFa3ConfigsCompileSpillFreeForSm90a) {
  // Each mask and dtype once, the LSE written on one of each: the variant the tuner measures (no
  // LSE) and the one the runtime serves when asked for the LSE.
  const struct {
    DType dtype;
    bool causal;
    bool lse;
  } variants[] = {{DType::kBF16, false, false},
                  {DType::kBF16, true, true},
                  {DType::kFP16, false, true},
                  {DType::kFP16, true, false}};
  std::vector<Case> cases;
  for (const auto& s : testing::shipped_fa3_configs())
    for (const auto& v : variants)
      cases.push_back({problem(s.head_dim, v.dtype, v.causal), s.config, v.lse, "sm_90a"});
  for (const Case& c : cases)
    ASSERT_FALSE(validate(c.problem, c.config, device_profile("h200"))) << to_key(c.config);
  const auto failures = compile_all(cases, true);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
}

// Persistent CTAs (a tile loop, two Q buffers and their q_empty barriers) of every shipped fa3
// tile whose second Q buffer fits, both masks, with and without the LSE: spill-free.
TEST(AttentionTemplates, PersistentKernelsCompileSpillFree) {
  const DeviceDesc& h200 = device_profile("h200");
  std::vector<Case> cases;
  for (const auto& s : testing::shipped_fa3_configs()) {
    AttentionConfig c = s.config;
    c.persistent = true;
    for (bool causal : {false, true}) {
      AttentionProblem p = problem(s.head_dim, causal ? DType::kFP16 : DType::kBF16, causal);
      p.batch = 8;
      if (!validate(p, c, h200)) cases.push_back({p, c, causal, "sm_90a"});
    }
  }
  ASSERT_GE(cases.size(), 16u);
  const auto failures = compile_all(cases, true);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
}

// Split-KV instantiates the main kernel writing partials and the combine pass; both compile
// spill-free (the one-consumer CTA's 216 registers after setmaxnreg at every head dim), one CTA a
// split or persistent CTAs working splits in turn.
TEST(AttentionTemplates, SplitKvKernelsCompileSpillFreeWithTheirCombinePass) {
  std::vector<Case> cases;
  for (std::int64_t d : {64, 128, 256}) {
    AttentionProblem decode = problem(d, DType::kBF16, false);
    decode.batch = 8;
    decode.heads_q = 32;
    decode.heads_kv = 8;
    decode.seqlen_q = 1;
    decode.seqlen_k = 8192;
    AttentionConfig c = testing::fa3_config(64, 64, d == 256 ? 2 : 3);
    c.pack_gqa = true;
    c.splits = 4;
    cases.push_back({decode, c, true, "sm_90a"});
    c.persistent = true;
    cases.push_back({decode, c, false, "sm_90a"});
    if (d == 256) continue;
    AttentionProblem chunk = problem(d, DType::kFP16, true);
    chunk.seqlen_q = 37;
    AttentionConfig wide = testing::fa3_config(64, 128, 2);
    wide.splits = 8;
    cases.push_back({chunk, wide, false, "sm_90a"});
  }
  for (const Case& c : cases) {
    ASSERT_FALSE(validate(c.problem, c.config, device_profile("h200"))) << to_key(c.config);
    const gen::GeneratedSource s = gen::generate_attention(c.problem, c.config, c.lse, "sm_90a");
    ASSERT_EQ(s.name_expressions.size(), 2u) << to_key(c.config);
    EXPECT_NE(s.code.find("attention_split_combine.cuh"), std::string::npos);
  }
  const auto failures = compile_all(cases, true);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
}

TEST(AttentionTemplates, Fa3PtxIsWgmmaFedByTmaAndItsHeaderIsEmbedded) {
  const auto& embedded = gen::embedded_templates();
  EXPECT_TRUE(std::any_of(embedded.begin(), embedded.end(), [](const gen::EmbeddedFile& f) {
    return f.name == "kerntune/attention/attention_fwd_sm90.cuh";
  }));
  std::vector<std::future<std::string>> ptx;
  for (const auto& s : testing::shipped_fa3_configs())
    ptx.push_back(std::async(std::launch::async, [s] {
      return gen::compile_to_ptx(gen::generate_attention(problem(s.head_dim, DType::kBF16, true),
                                                         s.config, true, "sm_90a"));
    }));
  for (std::size_t i = 0; i < ptx.size(); ++i) {
    const std::string text = ptx[i].get();
    SCOPED_TRACE(to_key(testing::shipped_fa3_configs()[i].config));
    EXPECT_NE(text.find("wgmma.mma_async"), std::string::npos);
    EXPECT_NE(text.find("cp.async.bulk.tensor"), std::string::npos);
  }
}

// `kerntune trace --op attention` compiles fa3 with -DKT_TRACE: %globaltimer stamps, the CTA's
// %smid and its SM's %clock64, spill-free in a plain and a persistent ping-pong kernel; every
// tuned or served kernel (no define) has none of them.
TEST(AttentionTemplates, Fa3PhaseMarksExistOnlyWithKtTraceAndSpillNothing) {
  for (bool persistent : {false, true}) {
    AttentionConfig c = testing::fa3_config(128, 128, 2, true);
    c.persistent = persistent;
    AttentionProblem p = problem(128, DType::kBF16, true);
    p.batch = 8;  // more query blocks than SMs, as a persistent grid needs
    ASSERT_FALSE(validate(p, c, device_profile("h200"))) << to_key(c);
    gen::GeneratedSource source = gen::generate_attention(p, c, false, "sm_90a");
    const std::string plain = gen::compile_to_ptx(source);
    EXPECT_EQ(plain.find("globaltimer"), std::string::npos);
    EXPECT_EQ(plain.find("%smid"), std::string::npos);
    source.options.push_back("-DKT_TRACE=1");
    const std::string marked = gen::compile_to_ptx(source);
    EXPECT_NE(marked.find("%globaltimer"), std::string::npos) << to_key(c);
    EXPECT_NE(marked.find("%smid"), std::string::npos) << to_key(c);
    EXPECT_NE(marked.find("%clock64"), std::string::npos) << to_key(c);
    const gen::CompiledKernel k = gen::compile(source);
    EXPECT_EQ(k.report.total_spill_bytes(), 0u) << to_key(c);
  }
}

TEST(AttentionTemplates, CheckKernelsCompileForBothDtypes) {
  for (DType dtype : {DType::kBF16, DType::kFP16}) {
    const gen::CompiledKernel k =
        gen::compile(gen::generate_attention_check(problem(128, dtype, false), "sm_90a"));
    EXPECT_EQ(k.lowered_names.size(), std::size_t(gen::kNumAttentionCheckKernels));
    EXPECT_FALSE(k.cubin.empty());
  }
}

}  // namespace
}  // namespace kt
