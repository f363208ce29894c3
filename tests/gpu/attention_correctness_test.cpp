// Attention-forward correctness on the GPU: fresh random Q, K, V with O and LSE poisoned first,
// against an FP32 reference on sampled rows, over every feature: dtypes, head dims, causal with
// Nq != Nk, GQA and MQA, ragged lengths, both layouts, the LSE, and every config of the space;
// once per family (fa2, and fa3 on sm_90a), plus the shipped fa3 configs and TMA's rules.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "generator/generated_source.hpp"
#include "gpu/gpu_fixture.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/attention/attention_source.hpp"
#include "ops/attention/attention_workload.hpp"
#include "runtime/cubin_provider.hpp"
#include "support/attention_builders.hpp"
#include "support/precompile.hpp"

namespace kt {
namespace {

// A shape in the CLI's syntax and its mask.
struct MaskedShape {
  const char* shape;
  bool causal;
};

class AttentionCorrectness : public testing::GpuTest {
 protected:
  static cache::Database& cubin_cache() {
    static cache::Database db =
        cache::Database::open((std::filesystem::temp_directory_path() /
                               ("kt_gpu_attn_" + std::to_string(::getpid()) + ".db"))
                                  .string());
    return db;
  }

  static AttentionProblem make_problem(const std::string& shape, DType dtype, bool causal) {
    AttentionProblem p;
    p.dtype = dtype;
    p.causal = causal;
    parse_attention_shape(shape, p);
    return p;
  }

  void check(const std::string& shape, DType dtype, bool causal, tune::AttentionLayout layout,
             const AttentionConfig& config, bool lse = true) {
    const AttentionProblem p = make_problem(shape, dtype, causal);
    const std::string label =
        fmt::format("{} {} {} lse={}", to_key(p), to_key(config),
                    layout == tune::AttentionLayout::kBNHD ? "bnhd" : "bhnd", lse);
    if (auto why = validate(p, config, device_)) GTEST_SKIP() << label << ": " << *why;
    rt::ModuleCache modules;
    CUstream stream = nullptr;
    ASSERT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    {
      tune::AttentionWorkload work(
          p, device_, &cubin_cache(), modules, stream,
          std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()), layout);
      const auto cubin = rt::get_or_compile(
          &cubin_cache(), gen::generate_attention(p, config, lse, device_.arch()), true, true);
      const rt::AttentionKernel kernel(p, config, modules.load(cubin.record));
      const AttentionTensors t = work.tensors(lse);
      rt::DeviceBuffer workspace;
      if (kernel.workspace_bytes() > 0) {
        workspace = rt::DeviceBuffer(std::size_t(kernel.workspace_bytes()));
        // Poisoned too: every partial the combine pass reads must have been written.
        ASSERT_EQ(rt::driver().memset_d8_async(workspace.get(), 0xFF, workspace.bytes(), stream),
                  CUDA_SUCCESS);
      }
      work.poison_output();
      ASSERT_EQ(kernel.launch(t, workspace.get(), stream), CUDA_SUCCESS) << label;
      const tune::OutputCheck result = work.check_output(lse);
      EXPECT_TRUE(result.passed) << label << ": " << result.detail << " (rel "
                                 << result.relative_error << ")";
    }
    rt::driver().stream_destroy(stream);
  }

  // Every config of the space for `shape` that `selected` keeps (at least one), alternating the
  // layout and dtype (BNHD bf16, BHND fp16) and leaving the LSE out of every third.
  template <typename Select>
  void check_each(const char* shape, bool causal, Select selected) {
    const AttentionProblem p = make_problem(shape, DType::kBF16, causal);
    std::vector<AttentionConfig> configs;
    for (const AttentionConfig& c : enumerate_attention_configs(p, device_))
      if (selected(c)) configs.push_back(c);
    ASSERT_FALSE(configs.empty()) << shape;
    precompile(p, configs);
    int i = 0;
    for (const AttentionConfig& c : configs) {
      const bool bnhd = i++ % 2 == 0;
      check(shape, bnhd ? DType::kBF16 : DType::kFP16, causal,
            bnhd ? tune::AttentionLayout::kBNHD : tune::AttentionLayout::kBHND, c, i % 3 != 0);
    }
  }

  // Compiles the kernels of every valid config for `p`, with and without the LSE, into the tier's
  // cubin cache on every core (testing::precompile).
  void precompile(const AttentionProblem& p, const std::vector<AttentionConfig>& configs) {
    std::vector<gen::GeneratedSource> sources;
    for (const AttentionConfig& c : configs)
      if (!validate(p, c, device_))
        for (bool lse : {false, true})
          sources.push_back(gen::generate_attention(p, c, lse, device_.arch()));
    testing::precompile(cubin_cache(), sources);
  }
};

// The feature tests, once per family (fa3 only on an sm_90a device), each problem with the
// model's best config of the family.
class AttentionCorrectnessPerFamily : public AttentionCorrectness,
                                      public ::testing::WithParamInterface<AttentionFamily> {
 protected:
  void SetUp() override {
    AttentionCorrectness::SetUp();
    if (IsSkipped()) return;
    if (GetParam() == AttentionFamily::kSm90 && device_.arch() != "sm_90a")
      GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  }

  std::vector<AttentionConfig> family_space(const AttentionProblem& p) const {
    std::vector<AttentionConfig> out;
    for (const AttentionConfig& c : enumerate_attention_configs(p, device_))
      if (c.family == GetParam()) out.push_back(c);
    return out;
  }

  // The family has no config for d = 96 (fa3); every other problem here must have one.
  void check_best(const std::string& shape, DType dtype, bool causal, tune::AttentionLayout layout,
                  bool lse = true) {
    const AttentionProblem p = make_problem(shape, dtype, causal);
    const auto ranked = rank_by_model(p, family_space(p), device_);
    if (ranked.empty()) {
      if (GetParam() == AttentionFamily::kSm90 && p.head_dim == 96) return;
      FAIL() << "no config of the family for " << to_key(p);
    }
    check(shape, dtype, causal, layout, ranked.front().config, lse);
  }
};

using tune::AttentionLayout;

INSTANTIATE_TEST_SUITE_P(Attention, AttentionCorrectnessPerFamily,
                         ::testing::Values(AttentionFamily::kSm80, AttentionFamily::kSm90),
                         [](const auto& info) {
                           return std::string(info.param == AttentionFamily::kSm90 ? "fa3" : "fa2");
                         });

TEST_P(AttentionCorrectnessPerFamily, RaggedLengthsBothMasksBothDtypes) {
  for (const char* shape :
       {"b=2,h=4,sq=1,sk=1,d=128", "b=2,h=4,s=127,d=128", "b=1,h=4,s=1000,d=128",
        "b=1,h=2,s=4097,d=128", "b=3,h=2,sq=127,sk=1000,d=64", "b=2,h=2,sq=1000,sk=127,d=64"})
    for (DType dtype : {DType::kBF16, DType::kFP16})
      for (bool causal : {false, true}) check_best(shape, dtype, causal, AttentionLayout::kBNHD);
}

TEST_P(AttentionCorrectnessPerFamily, CausalWithMoreQueriesThanKeysLeavesEmptyRowsZero) {
  // Bottom-right alignment: the first sq - sk rows see no key (O = 0, lse = -inf).
  check_best("b=1,h=2,sq=300,sk=100,d=128", DType::kBF16, true, AttentionLayout::kBNHD);
  check_best("b=1,h=2,sq=1000,sk=127,d=64", DType::kBF16, true, AttentionLayout::kBHND);
}

TEST_P(AttentionCorrectnessPerFamily, GqaAndMqaWithoutCopies) {
  check_best("b=1,hq=32,hkv=8,s=1024,d=128", DType::kBF16, true, AttentionLayout::kBNHD);
  check_best("b=2,hq=8,hkv=1,s=513,d=128", DType::kFP16, false, AttentionLayout::kBHND);
  check_best("b=1,hq=32,hkv=8,sq=77,sk=2000,d=64", DType::kBF16, false, AttentionLayout::kBNHD);
}

// Packed varlen batches (the workload's synthetic lengths: the longest first, the rest even):
// ragged lengths with Nq != Nk per sequence, sequences of one row, rows that see no key, GQA and
// MQA, both masks and layouts, every head dim the family has.
TEST_P(AttentionCorrectnessPerFamily, PackedVarlenBatchesBothMasksBothLayouts) {
  int i = 0;
  for (const char* shape :
       {"b=4,hq=8,hkv=2,sq=1000,sk=1000,tq=1500,tk=1500,d=128",
        "b=3,h=4,sq=127,sk=300,tq=200,tk=400,d=64", "b=5,hq=4,hkv=1,sq=4097,tq=4200,d=128",
        "b=2,h=2,sq=300,sk=77,tq=301,tk=78,d=256", "b=3,h=2,sq=1,sk=1000,tq=3,tk=1500,d=128"})
    for (bool causal : {false, true}) {
      const DType dtype = i % 3 == 2 ? DType::kFP16 : DType::kBF16;
      check_best(shape, dtype, causal,
                 i % 2 == 0 ? AttentionLayout::kBNHD : AttentionLayout::kBHND);
      ++i;
    }
}

TEST_P(AttentionCorrectnessPerFamily, EveryHeadDimBothLayouts) {
  for (const char* shape :
       {"b=2,h=4,s=777,d=64", "b=2,h=4,s=777,d=96", "b=2,h=4,s=777,d=128", "b=2,h=2,s=777,d=256"})
    for (AttentionLayout layout : {AttentionLayout::kBNHD, AttentionLayout::kBHND})
      for (bool causal : {false, true}) check_best(shape, DType::kBF16, causal, layout);
}

TEST_P(AttentionCorrectnessPerFamily, EveryConfigOfTheSpaceWithAndWithoutLse) {
  for (const char* shape :
       {"b=1,h=4,sq=333,sk=517,d=128", "b=1,h=4,s=300,d=64", "b=1,h=2,s=300,d=256"}) {
    const AttentionProblem p = make_problem(shape, DType::kBF16, true);
    const auto space = family_space(p);
    ASSERT_FALSE(space.empty()) << shape;
    precompile(p, space);
    for (const AttentionConfig& c : space)
      for (bool lse : {false, true})
        check(shape, DType::kBF16, true, AttentionLayout::kBNHD, c, lse);
  }
}

// Decode steps with the query heads of a KV head packed as rows (pack_gqa): GQA and MQA, ragged
// key counts, both layouts, both masks (one query row: the causal mask hides nothing), the LSE.
TEST_F(AttentionCorrectness, PackedGqaDecodeStepsEveryLayoutAndMask) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  for (const char* shape :
       {"b=3,hq=8,hkv=2,sq=1,sk=1000,d=128", "b=2,hq=16,hkv=1,sq=1,sk=4097,d=64",
        "b=1,hq=32,hkv=4,sq=1,sk=77,d=256"}) {
    const AttentionProblem p = make_problem(shape, DType::kBF16, false);
    std::vector<AttentionConfig> packed;
    for (const AttentionConfig& c : enumerate_attention_configs(p, device_))
      if (c.pack_gqa) packed.push_back(c);
    ASSERT_FALSE(packed.empty()) << shape;
    precompile(p, packed);
    for (const AttentionConfig& c : packed)
      for (AttentionLayout layout : {AttentionLayout::kBNHD, AttentionLayout::kBHND})
        check(shape, layout == AttentionLayout::kBNHD ? DType::kBF16 : DType::kFP16,
              layout == AttentionLayout::kBHND, layout, c);
  }
}

// Split-KV (every split count of every config that takes one): packed decode steps over GQA and
// MQA, short query blocks with both masks, splits left empty by the causal mask or by fewer key
// blocks than splits would need, and rows that see no key at all (O = 0, lse = -inf), both
// layouts, with and without the LSE; the workspace starts as NaN.
TEST_F(AttentionCorrectness, SplitKvEverySplitCountOnDecodeAndShortQueryBlocks) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  for (const MaskedShape& k : {MaskedShape{"b=3,hq=8,hkv=2,sq=1,sk=1000,d=128", false},
                               MaskedShape{"b=2,hq=16,hkv=1,sq=1,sk=4097,d=64", true},
                               MaskedShape{"b=1,hq=32,hkv=4,sq=1,sk=77,d=256", false},
                               MaskedShape{"b=2,h=4,sq=37,sk=3001,d=128", true},
                               MaskedShape{"b=2,hq=8,hkv=2,sq=64,sk=1500,d=64", false},
                               MaskedShape{"b=1,h=2,sq=50,sk=200,d=64", true},
                               MaskedShape{"b=1,h=2,sq=100,sk=70,d=64", true}})
    check_each(k.shape, k.causal, [](const AttentionConfig& c) { return c.splits > 1; });
}

// Persistent CTAs (every persistent config of the space), each working several tiles and the
// last ones fewer: ragged query blocks, causal with more queries than keys (rows that see no key)
// and fewer, GQA and MQA, a packed varlen batch (tiles past a shorter sequence's rows skipped),
// causal tile orders of several L2 sections (b=2,h=24,s=4100,d=128: 2 MB of K and V an entry, six
// sections of 8 entries; the varlen batch's 80 entries: 32, 32 and a shorter 16), both
// layouts and dtypes, with and without the LSE.
TEST_F(AttentionCorrectness, PersistentCtasOnRaggedCausalGqaAndPackedShapes) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  for (const MaskedShape& k :
       {MaskedShape{"b=3,hq=16,hkv=4,sq=1000,sk=777,d=128", true},
        MaskedShape{"b=3,hq=16,hkv=4,sq=777,sk=1000,d=128", false},
        MaskedShape{"b=2,h=40,s=517,d=64", true}, MaskedShape{"b=1,hq=8,hkv=1,s=2000,d=256", false},
        MaskedShape{"b=5,hq=16,hkv=4,sq=4097,tq=9000,d=128", true},
        MaskedShape{"b=2,h=24,s=4100,d=128", true}})
    check_each(k.shape, k.causal, [](const AttentionConfig& c) { return c.persistent; });
}

// Persistent split-KV (every persistent config with splits): CTAs working splits of several heads
// in turn on a grid smaller than the items, a GQA decode step packed or not, MQA at d = 64, and
// causal short query blocks whose splits the mask leaves uneven or empty, both layouts, with and
// without the LSE.
TEST_F(AttentionCorrectness, PersistentSplitKvOnDecodeStepsAndShortQueryBlocks) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  for (const MaskedShape& k : {MaskedShape{"b=9,hq=32,hkv=8,sq=1,sk=3001,d=128", false},
                               MaskedShape{"b=21,hq=16,hkv=1,sq=1,sk=1500,d=64", false},
                               MaskedShape{"b=3,h=24,sq=37,sk=1000,d=128", true}})
    check_each(k.shape, k.causal,
               [](const AttentionConfig& c) { return c.persistent && c.splits > 1; });
}

// Ping-pong tiles whose last warpgroups have no rows (past seqlen_q) take those warpgroups'
// turns empty: every ping-pong config, persistent or not, where the last tile leaves one idle
// (bm128 at 777 = 6 · 128 + 9 and 300 = 2 · 128 + 44) or two (bm192 at 777 = 4 · 192 + 9), both
// masks, and a packed batch whose sequences end anywhere in a tile.
TEST_F(AttentionCorrectness, PingPongTilesWithIdleWarpgroups) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  for (const MaskedShape& k : {MaskedShape{"b=2,hq=8,hkv=2,sq=777,sk=777,d=64", false},
                               MaskedShape{"b=2,hq=8,hkv=2,sq=777,sk=1000,d=64", true},
                               MaskedShape{"b=3,hq=8,hkv=2,sq=300,sk=700,d=128", true},
                               MaskedShape{"b=3,hq=8,hkv=2,sq=300,sk=300,d=128", false},
                               MaskedShape{"b=5,hq=8,hkv=2,sq=1500,tq=4000,d=64", true}})
    check_each(k.shape, k.causal, [](const AttentionConfig& c) { return c.pingpong; });
}

// Causal launches of one CTA a query block in the sectioned order of common/work_order.h (the
// CTA's tile from its linear blockIdx): every config of both families without persistence or
// split-KV on shapes of several L2 sections: MHA with 2 MB of K and V an entry at 4100 keys
// (sections of 8 of 48 entries), GQA 12/4 with 0.7 MB (sections of 16 of 36 entries, the last
// one 4).
TEST_F(AttentionCorrectness, CausalCtasInSectionedOrderEveryConfig) {
  for (const char* shape : {"b=2,h=24,s=4100,d=128", "b=3,hq=12,hkv=4,sq=4100,sk=4100,d=128"})
    check_each(shape, true,
               [](const AttentionConfig& c) { return !c.persistent && c.splits == 1; });
}

// The shipped fa3 configs on ragged GQA and MQA shapes with Nq < Nk and Nq > Nk, both layouts,
// both masks and dtypes.
TEST_F(AttentionCorrectness, ShippedFa3ConfigsOnRaggedGqaAndMqaShapes) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  for (const auto& s : testing::shipped_fa3_configs()) {
    const std::string d = std::to_string(s.head_dim);
    check("b=2,hq=8,hkv=2,sq=127,sk=1000,d=" + d, DType::kBF16, true, AttentionLayout::kBNHD,
          s.config);
    check("b=1,hq=4,hkv=1,sq=1000,sk=127,d=" + d, DType::kFP16, false, AttentionLayout::kBHND,
          s.config);
  }
}

// TMA's addressing rules are fa3's alone: a row stride that is not a multiple of 16 bytes is
// refused before any launch, naming the tensor and the stride.
TEST_F(AttentionCorrectness, Fa3RefusesTensorsTmaCannotAddress) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  const AttentionProblem p = make_problem("b=1,h=2,s=64,d=64", DType::kBF16, false);
  const AttentionConfig config = testing::fa3_config(128, 128, 2);
  rt::ModuleCache modules;
  const auto cubin = rt::get_or_compile(
      &cubin_cache(), gen::generate_attention(p, config, false, device_.arch()), true, true);
  const rt::AttentionKernel kernel(p, config, modules.load(cubin.record));
  AttentionTensors t;
  t.set_bnhd_strides(p);
  alignas(16) static char buffer[64];
  t.q = t.k = t.v = t.o = buffer;
  t.q_strides[1] += 4;  // 8 bytes more per row
  AttentionSm90Params params;
  try {
    kernel.make_sm90_params(t, params);
    ADD_FAILURE() << "an 8-byte row stride remainder was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tensor Q"), std::string::npos) << what;
    EXPECT_NE(what.find("row stride"), std::string::npos) << what;
    EXPECT_NE(what.find("fa2 family has no such requirement"), std::string::npos) << what;
  }
}

// A call the runtime's fa3 kernel cannot map (a batch stride of 2^40 elements, legal since batch is
// 1 and never multiplied) is served by the fa2 fallback instead of refused, and is correct.
TEST_F(AttentionCorrectness, RuntimeFallsBackToFa2ForTensorsTmaCannotAddress) {
  if (device_.arch() != "sm_90a")
    GTEST_SKIP() << "the fa3 family needs sm_90a; device is " << device_.arch();
  const AttentionProblem p = make_problem("b=1,h=8,s=1024,d=128", DType::kBF16, true);
  RuntimeOptions options;
  options.database_path = (std::filesystem::temp_directory_path() /
                           ("kt_gpu_attn_fallback_" + std::to_string(::getpid()) + ".db"))
                              .string();
  {
    auto runtime = Runtime::open(options);
    ASSERT_EQ(runtime->prepare_attention(p).config_key.substr(0, 4), "fa3.")
        << "the model's default here should be fa3, or this test checks nothing";
    rt::ModuleCache modules;
    CUstream stream = nullptr;
    ASSERT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    {
      tune::AttentionWorkload work(
          p, device_, &cubin_cache(), modules, stream,
          std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()),
          tune::AttentionLayout::kBNHD);
      AttentionTensors t = work.tensors(true);
      t.q_strides[0] = t.o_strides[0] = std::int64_t(1) << 40;
      work.poison_output();
      runtime->attention_forward(p, t, stream);
      const tune::OutputCheck result = work.check_output(true);
      EXPECT_TRUE(result.passed) << result.detail << " (rel " << result.relative_error << ")";
    }
    rt::driver().stream_destroy(stream);
  }
  std::filesystem::remove(options.database_path);
}

}  // namespace
}  // namespace kt
