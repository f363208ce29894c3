// Attention-forward correctness on the GPU: fresh random Q, K, V with O and LSE poisoned first,
// against an FP32 reference on sampled rows, over every feature: dtypes, head dims, causal with
// Nq != Nk, GQA and MQA, ragged lengths, both layouts, the LSE, and every config of the space.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "generator/generated_source.hpp"
#include "gpu/gpu_fixture.hpp"
#include "runtime/attention_dispatch.hpp"
#include "runtime/attention_kernel.hpp"
#include "runtime/cubin_provider.hpp"
#include "tuner/attention_workload.hpp"

namespace kt {
namespace {

class AttentionCorrectness : public testing::GpuTest {
 protected:
  static cache::Database& cubin_cache() {
    static cache::Database db = cache::Database::open(
        (std::filesystem::temp_directory_path() / ("kt_gpu_attn_" + std::to_string(::getpid()) + ".db")).string());
    return db;
  }

  void check(const std::string& shape, DType dtype, bool causal, tune::AttentionLayout layout,
             const AttentionConfig* forced = nullptr, bool lse = true) {
    AttentionProblem p;
    p.dtype = dtype;
    p.causal = causal;
    parse_attention_shape(shape, p);
    const AttentionConfig config =
        forced ? *forced : rt::model_ranked_attention_configs(p, device_, 1).front();
    const std::string label = fmt::format("{} {} {} lse={}", to_key(p), to_key(config),
                                          layout == tune::AttentionLayout::kBNHD ? "bnhd" : "bhnd", lse);
    if (auto why = validate(p, config, device_)) GTEST_SKIP() << label << ": " << *why;
    rt::ModuleCache modules;
    CUstream stream = nullptr;
    ASSERT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    {
      tune::AttentionWorkload work(p, device_, &cubin_cache(), modules, stream,
                                   std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()),
                                   layout);
      const auto cubin = rt::get_or_compile(&cubin_cache(), gen::generate_attention(p, config, lse, device_.arch()), true, true);
      const rt::AttentionKernel kernel(p, config, modules.load(cubin.record));
      const AttentionTensors t = work.tensors(lse);
      work.poison_output();
      ASSERT_EQ(kernel.launch(t, stream), CUDA_SUCCESS) << label;
      const tune::OutputCheck result = work.check_output(lse);
      EXPECT_TRUE(result.passed) << label << ": " << result.detail << " (rel " << result.relative_error << ")";
    }
    rt::driver().stream_destroy(stream);
  }
};

using tune::AttentionLayout;

TEST_F(AttentionCorrectness, RaggedLengthsBothMasksBothDtypes) {
  for (const char* shape : {"b=2,h=4,sq=1,sk=1,d=128", "b=2,h=4,s=127,d=128", "b=1,h=4,s=1000,d=128",
                            "b=1,h=2,s=4097,d=128", "b=3,h=2,sq=127,sk=1000,d=64"})
    for (DType dtype : {DType::kBF16, DType::kFP16})
      for (bool causal : {false, true}) check(shape, dtype, causal, AttentionLayout::kBNHD);
}

TEST_F(AttentionCorrectness, CausalWithMoreQueriesThanKeysLeavesEmptyRowsZero) {
  // Bottom-right alignment: the first sq - sk rows see no key (O = 0, lse = -inf).
  check("b=1,h=2,sq=300,sk=100,d=128", DType::kBF16, true, AttentionLayout::kBNHD);
  check("b=1,h=2,sq=1000,sk=127,d=64", DType::kBF16, true, AttentionLayout::kBHND);
}

TEST_F(AttentionCorrectness, GqaAndMqaWithoutCopies) {
  check("b=1,hq=32,hkv=8,s=1024,d=128", DType::kBF16, true, AttentionLayout::kBNHD);
  check("b=2,hq=8,hkv=1,s=513,d=128", DType::kFP16, false, AttentionLayout::kBHND);
  check("b=1,hq=32,hkv=8,sq=77,sk=2000,d=64", DType::kBF16, false, AttentionLayout::kBNHD);
}

TEST_F(AttentionCorrectness, EveryHeadDimBothLayouts) {
  for (const char* shape : {"b=2,h=4,s=777,d=64", "b=2,h=4,s=777,d=96", "b=2,h=4,s=777,d=128",
                            "b=2,h=2,s=777,d=256"})
    for (AttentionLayout layout : {AttentionLayout::kBNHD, AttentionLayout::kBHND})
      for (bool causal : {false, true}) check(shape, DType::kBF16, causal, layout);
}

TEST_F(AttentionCorrectness, EveryConfigOfTheSpaceWithAndWithoutLse) {
  for (const char* shape : {"b=1,h=4,sq=333,sk=517,d=128", "b=1,h=4,s=300,d=64", "b=1,h=2,s=300,d=256"}) {
    AttentionProblem p;
    parse_attention_shape(shape, p);
    for (const AttentionConfig& c : enumerate_attention_configs(p, device_))
      for (bool lse : {false, true}) check(shape, DType::kBF16, true, AttentionLayout::kBNHD, &c, lse);
  }
}

}  // namespace
}  // namespace kt
