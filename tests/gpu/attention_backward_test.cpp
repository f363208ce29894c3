// Attention backward on the GPU: fresh random Q, K, V, dO, with O and the logsumexp from an FP32
// forward of every row, dQ, dK, dV and the workspace poisoned first, each gradient against an
// FP32 reference on sampled rows (the op's workload): ragged lengths (1, 127, 1000) with
// Nq != Nk both ways, both masks (causal rows that see no key), GQA and MQA, head_dim 64, 96, 128
// and 256 (two CTAs or, fa3, two consumers a key block), both layouts, both dtypes, the model's
// best config of each family (fa3 where the device is sm_90a), causal orders over several L2
// sections, every config of the space, every fa3 config on ragged shapes of both masks and
// layouts; deterministic mode bitwise identical over 10 runs; and the runtime through the C++ API
// and the C ABI, with a workspace smaller than the problem needs. A failure names the config, the
// gradient, its error and where it lies (the worst element, the sampled rows that are off).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "gpu/gpu_fixture.hpp"
#include "kerntune/kerntune.h"
#include "kerntune/kerntune.hpp"
#include "ops/attention_backward/attention_backward_config.hpp"
#include "ops/attention_backward/attention_backward_kernel.hpp"
#include "ops/attention_backward/attention_backward_workload.hpp"
#include "runtime/cubin_provider.hpp"
#include "support/precompile.hpp"

namespace kt {
namespace {

using tune::AttentionLayout;

std::uint64_t fresh_seed() {
  return std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
}

class AttentionBackwardCorrectness : public testing::GpuTest {
 protected:
  static std::string db_path() {
    return (std::filesystem::temp_directory_path() /
            ("kt_gpu_attnbwd_" + std::to_string(::getpid()) + ".db"))
        .string();
  }
  static cache::Database& cubin_cache() {
    static cache::Database db = cache::Database::open(db_path());
    return db;
  }

  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_EQ(rt::driver().stream_create(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (stream_ != nullptr) rt::driver().stream_destroy(stream_);
  }

  static AttentionBackwardProblem make_problem(const std::string& shape, DType dtype, bool causal,
                                               bool deterministic = false) {
    AttentionBackwardProblem p;
    p.dtype = dtype;
    p.causal = causal;
    p.deterministic = deterministic;
    parse_attention_backward_shape(shape, p);
    return p;
  }

  gen::GeneratedSource source(const AttentionBackwardProblem& p,
                              const AttentionBackwardConfig& c) const {
    return gen::generate(op_spec("attention-backward"), to_key(p), to_key(c), "", device_.arch());
  }

  rt::AttentionBackwardKernel load(const AttentionBackwardProblem& p,
                                   const AttentionBackwardConfig& c) {
    const auto cubin = rt::get_or_compile(&cubin_cache(), source(p, c), true, true);
    EXPECT_EQ(cubin.record.spill_bytes, 0) << to_key(p) << " " << to_key(c);
    return rt::AttentionBackwardKernel(p, c, modules_.load(cubin.record));
  }

  // The model's best config of the problem.
  AttentionBackwardConfig best(const AttentionBackwardProblem& p) const {
    const auto ranked = op_spec("attention-backward").ranked_configs(to_key(p), device_);
    EXPECT_FALSE(ranked.empty()) << to_key(p);
    return parse_attention_backward_config_key(ranked.front().config_key);
  }

  // The model's best config of each family the device runs (fa2 always; fa3 on sm_90a).
  std::vector<AttentionBackwardConfig> best_of_each_family(
      const AttentionBackwardProblem& p) const {
    std::vector<AttentionBackwardConfig> out;
    for (AttentionFamily family : {AttentionFamily::kSm80, AttentionFamily::kSm90})
      for (const RankedConfigKey& r :
           op_spec("attention-backward").ranked_configs(to_key(p), device_)) {
        const AttentionBackwardConfig c = parse_attention_backward_config_key(r.config_key);
        if (c.family != family) continue;
        out.push_back(c);
        break;
      }
    EXPECT_FALSE(out.empty()) << to_key(p);
    return out;
  }

  std::vector<AttentionBackwardConfig> fa3_space(const AttentionBackwardProblem& p) const {
    AttentionBackwardDomains fa3_only;
    fa3_only.families = {AttentionFamily::kSm90};
    return enumerate_attention_backward_configs(p, device_, fa3_only);
  }

  // Every config in `configs` on one workload of `p`: poison, launch, check.
  void check_configs(const AttentionBackwardProblem& p,
                     const std::vector<AttentionBackwardConfig>& configs,
                     AttentionLayout layout = AttentionLayout::kBNHD) {
    tune::AttentionBackwardWorkload work(p, device_, &cubin_cache(), modules_, stream_,
                                         fresh_seed(), layout);
    for (const AttentionBackwardConfig& c : configs) {
      const std::string label = fmt::format("{} {} {}", to_key(p), to_key(c),
                                            layout == AttentionLayout::kBNHD ? "bnhd" : "bhnd");
      if (auto why = validate(p, c, device_)) {
        ADD_FAILURE() << label << " is not valid: " << *why;
        continue;
      }
      const rt::AttentionBackwardKernel kernel = load(p, c);
      work.poison_output();
      ASSERT_EQ(kernel.launch(work.tensors(), work.workspace(), stream_), CUDA_SUCCESS) << label;
      const tune::OutputCheck result = work.check_output();
      EXPECT_TRUE(result.passed) << label << ": " << result.detail << " (rel "
                                 << result.relative_error << ")";
    }
  }

  // The best config of each family on one workload of the shape.
  void check_best(const std::string& shape, DType dtype, bool causal,
                  AttentionLayout layout = AttentionLayout::kBNHD, bool deterministic = false) {
    const AttentionBackwardProblem p = make_problem(shape, dtype, causal, deterministic);
    check_configs(p, best_of_each_family(p), layout);
  }

  void precompile(const AttentionBackwardProblem& p,
                  const std::vector<AttentionBackwardConfig>& configs) {
    std::vector<gen::GeneratedSource> sources;
    for (const AttentionBackwardConfig& c : configs) sources.push_back(source(p, c));
    testing::precompile(cubin_cache(), sources);
  }

  CUstream stream_ = nullptr;
  rt::ModuleCache modules_;
};

// One key against many queries is sq = 1000, sk = 2: with a single key dK is zero in exact
// arithmetic (every row's dS = dP - D vanishes), so its relative error measures rounding noise
// against rounding noise (fp16 0.0077 on the H200, 2026-12-03).
TEST_F(AttentionBackwardCorrectness, RaggedLengthsWithNqNotNkBothMasksBothDtypes) {
  for (const char* shape : {"b=2,h=2,sq=1,sk=1,d=64", "b=2,h=3,s=127,d=128", "b=1,h=2,s=1000,d=64",
                            "b=2,h=2,sq=127,sk=1000,d=128", "b=2,h=2,sq=1000,sk=127,d=64",
                            "b=1,h=2,sq=1,sk=1000,d=128", "b=1,h=2,sq=1000,sk=2,d=64"})
    for (DType dtype : {DType::kBF16, DType::kFP16})
      for (bool causal : {false, true}) check_best(shape, dtype, causal);
}

TEST_F(AttentionBackwardCorrectness, CausalRowsThatSeeNoKeyGetZeroGradients) {
  // Bottom-right alignment: the first sq - sk rows see no key (lse -inf, dQ = 0), and the key
  // blocks past the last row's diagonal see no query (dK = dV = 0 where causal hides them).
  check_best("b=1,h=2,sq=300,sk=100,d=128", DType::kBF16, true);
  check_best("b=2,h=2,sq=1000,sk=127,d=64", DType::kFP16, true, AttentionLayout::kBHND);
}

TEST_F(AttentionBackwardCorrectness, GqaAndMqaSumDkDvOverTheQueryHeads) {
  check_best("b=1,hq=8,hkv=2,s=1000,d=128", DType::kBF16, true);
  check_best("b=2,hq=8,hkv=1,sq=513,sk=700,d=64", DType::kFP16, false, AttentionLayout::kBHND);
  check_best("b=1,hq=16,hkv=4,sq=77,sk=2000,d=64", DType::kBF16, false);
  check_best("b=1,hq=4,hkv=1,sq=1000,sk=127,d=128", DType::kBF16, true, AttentionLayout::kBHND);
  check_best("b=2,hq=8,hkv=2,sq=300,sk=517,d=256", DType::kFP16, true);
}

TEST_F(AttentionBackwardCorrectness, EveryHeadDimBothLayoutsBothMasks) {
  for (const char* shape :
       {"b=2,h=3,sq=777,sk=555,d=64", "b=2,h=3,sq=555,sk=777,d=128", "b=2,h=3,sq=777,sk=555,d=96",
        "b=2,h=3,sq=555,sk=777,d=256", "b=1,h=2,sq=1000,sk=127,d=256"})
    for (AttentionLayout layout : {AttentionLayout::kBNHD, AttentionLayout::kBHND})
      for (bool causal : {false, true}) check_best(shape, DType::kBF16, causal, layout);
}

TEST_F(AttentionBackwardCorrectness, EveryConfigOfTheSpace) {
  for (const char* shape :
       {"b=1,hq=4,hkv=2,sq=333,sk=517,d=128", "b=1,hq=4,hkv=2,sq=517,sk=333,d=64",
        "b=1,hq=4,hkv=1,sq=200,sk=333,d=256", "b=1,hq=4,hkv=2,sq=333,sk=200,d=96"})
    for (bool deterministic : {false, true}) {
      const AttentionBackwardProblem p = make_problem(shape, DType::kBF16, true, deterministic);
      const auto space = enumerate_attention_backward_configs(p, device_);
      ASSERT_FALSE(space.empty()) << shape;
      precompile(p, space);
      check_configs(p, space);
    }
}

// Causal CTAs in order over several L2 sections of (key/value head, batch, part) entries, the
// last one shorter: at 4100 rows an entry's Q and dO are 2 MB at head_dim 128 (sections of 8: 36
// entries are 8, 8, 8, 8 and 4) and 4 MB at 256 (sections of 4: fa2's 2 parts a key block make
// 66 entries, 16 sections and 2); the best config of each family, both modes.
TEST_F(AttentionBackwardCorrectness, CausalOrderOverSeveralL2SectionsBothModes) {
  for (const char* shape : {"b=3,h=12,s=4100,d=128", "b=3,h=11,s=4100,d=256"})
    for (bool deterministic : {false, true})
      check_best(shape, DType::kBF16, true, AttentionLayout::kBNHD, deterministic);
}

// Every fa3 config (none off sm_90a) on ragged lengths that cross every block edge (Nq, Nk not
// multiples of 64, Nq != Nk both ways), GQA, both masks, both layouts, both dtypes, every head_dim
// the family takes; fresh data a shape.
TEST_F(AttentionBackwardCorrectness, EveryFa3ConfigOnRaggedShapesBothMasksBothLayouts) {
  const struct {
    const char* shape;
    DType dtype;
    AttentionLayout layout;
  } cases[] = {{"b=2,hq=4,hkv=2,sq=200,sk=333,d=64", DType::kBF16, AttentionLayout::kBNHD},
               {"b=1,hq=4,hkv=1,sq=333,sk=130,d=64", DType::kFP16, AttentionLayout::kBHND},
               {"b=2,hq=4,hkv=2,sq=330,sk=201,d=128", DType::kFP16, AttentionLayout::kBNHD},
               {"b=1,hq=6,hkv=3,sq=65,sk=390,d=128", DType::kBF16, AttentionLayout::kBHND},
               {"b=2,hq=4,hkv=2,sq=201,sk=130,d=256", DType::kBF16, AttentionLayout::kBNHD},
               {"b=1,hq=4,hkv=1,sq=77,sk=333,d=256", DType::kFP16, AttentionLayout::kBHND}};
  for (const auto& c : cases)
    for (bool causal : {false, true}) {
      const AttentionBackwardProblem p = make_problem(c.shape, c.dtype, causal);
      const auto space = fa3_space(p);
      if (space.empty()) GTEST_SKIP() << "the fa3 family needs sm_90a";
      precompile(p, space);
      check_configs(p, space, c.layout);
    }
}

// Deterministic mode: every run of a config writes the same bytes, and they are right; the
// default mode is checked on the same data too.
TEST_F(AttentionBackwardCorrectness, DeterministicModeIsBitwiseIdenticalOverTenRuns) {
  for (const char* shape : {"b=2,hq=8,hkv=2,s=1000,d=128", "b=1,h=4,sq=513,sk=2047,d=64",
                            "b=1,hq=4,hkv=2,sq=700,sk=1000,d=256", "b=1,hq=4,hkv=1,s=600,d=96"})
    for (bool causal : {true, false}) {
      const AttentionBackwardProblem p = make_problem(shape, DType::kBF16, causal, true);
      tune::AttentionBackwardWorkload work(p, device_, &cubin_cache(), modules_, stream_,
                                           fresh_seed());
      const auto space = enumerate_attention_backward_configs(p, device_);
      ASSERT_GE(space.size(), 2u);
      std::vector<AttentionBackwardConfig> configs = best_of_each_family(p);
      if (std::find(configs.begin(), configs.end(), space.back()) == configs.end())
        configs.push_back(space.back());
      for (const AttentionBackwardConfig& c : configs) {
        const std::string label = to_key(p) + " " + to_key(c);
        const rt::AttentionBackwardKernel kernel = load(p, c);
        std::vector<std::uint8_t> first;
        for (int run = 0; run < 10; ++run) {
          work.poison_output();
          ASSERT_EQ(kernel.launch(work.tensors(), work.workspace(), stream_), CUDA_SUCCESS)
              << label;
          const std::vector<std::uint8_t> bytes = work.output_bytes();
          if (run == 0) {
            first = bytes;
            const tune::OutputCheck result = work.check_output();
            EXPECT_TRUE(result.passed) << label << ": " << result.detail;
          } else {
            EXPECT_TRUE(bytes == first) << label << ": run " << run << " differs from run 0";
          }
        }
      }
    }
}

// The runtime end to end: Runtime::attention_backward and kt_attention_backward on the
// workload's tensors, with a workspace far smaller than the problem's dQ accumulator (the
// runtime grants the problem its own), and bad calls refused before any launch.
TEST_F(AttentionBackwardCorrectness, RuntimeServesTheCppApiAndTheCAbi) {
  const AttentionBackwardProblem p =
      make_problem("b=2,hq=8,hkv=2,sq=1000,sk=777,d=128", DType::kBF16, true);
  tune::AttentionBackwardWorkload work(p, device_, &cubin_cache(), modules_, stream_, fresh_seed(),
                                       AttentionLayout::kBHND);
  RuntimeOptions o;
  o.database_path = db_path();
  o.workspace_bytes = 1 << 20;
  auto runtime = Runtime::open(o);
  const DispatchInfo info = runtime->prepare_attention_backward(p);
  EXPECT_EQ(info.grade, "model-default");
  work.poison_output();
  runtime->attention_backward(p, work.tensors(), stream_);
  tune::OutputCheck result = work.check_output();
  EXPECT_TRUE(result.passed) << info.config_key << ": " << result.detail;

  AttentionBackwardTensors no_lse = work.tensors();
  no_lse.lse = nullptr;
  EXPECT_THROW(runtime->attention_backward(p, no_lse, stream_), Error);
  AttentionBackwardTensors misaligned = work.tensors();
  misaligned.dk = static_cast<char*>(misaligned.dk) + 2;
  EXPECT_THROW(runtime->attention_backward(p, misaligned, stream_), Error);

  kt_runtime* rt_c = nullptr;
  ASSERT_EQ(kt_runtime_open(db_path().c_str(), 0, &rt_c), KT_SUCCESS) << kt_last_error();
  const AttentionBackwardTensors& t = work.tensors();
  kt_attention_backward_args args{};
  args.batch = p.batch;
  args.heads_q = p.heads_q;
  args.heads_kv = p.heads_kv;
  args.seqlen_q = p.seqlen_q;
  args.seqlen_k = p.seqlen_k;
  args.head_dim = p.head_dim;
  args.dtype = KT_DTYPE_BF16;
  args.causal = 1;
  args.deterministic = 1;
  args.q = t.q;
  args.k = t.k;
  args.v = t.v;
  args.o = t.o;
  args.dout = t.dout;
  args.lse = t.lse;
  args.dq = t.dq;
  args.dk = t.dk;
  args.dv = t.dv;
  for (int i = 0; i < 3; ++i) {
    args.q_strides[i] = t.q_strides[i];
    args.k_strides[i] = t.k_strides[i];
    args.v_strides[i] = t.v_strides[i];
    args.o_strides[i] = t.o_strides[i];
    args.dout_strides[i] = t.dout_strides[i];
    args.dq_strides[i] = t.dq_strides[i];
    args.dk_strides[i] = t.dk_strides[i];
    args.dv_strides[i] = t.dv_strides[i];
  }
  work.poison_output();
  ASSERT_EQ(kt_attention_backward(rt_c, &args, stream_), KT_SUCCESS) << kt_last_error();
  result = work.check_output();
  EXPECT_TRUE(result.passed) << "C ABI, deterministic: " << result.detail;
  kt_runtime_close(rt_c);
}

// The forward's "lse" variant hands the backward its inputs: kerntune's own forward writes O and
// the logsumexp over the workload's, and the backward of them still matches a reference built
// from them (the reference reads O and lse as stored).
TEST_F(AttentionBackwardCorrectness, TheForwardsLseVariantFeedsTheBackward) {
  const AttentionBackwardProblem p =
      make_problem("b=1,hq=8,hkv=2,sq=1000,sk=1500,d=128", DType::kBF16, true);
  RuntimeOptions o;
  o.database_path = db_path();
  auto runtime = Runtime::open(o);
  tune::AttentionBackwardWorkload reference(p, device_, &cubin_cache(), modules_, stream_,
                                            fresh_seed());
  // The workload's O and lse from its FP32 forward; kerntune's forward writes the same tensors
  // and must agree with them closely enough that the backward's check still passes.
  const AttentionBackwardTensors& t = reference.tensors();
  AttentionTensors forward;
  forward.q = t.q;
  forward.k = t.k;
  forward.v = t.v;
  forward.o = const_cast<void*>(t.o);
  forward.lse = const_cast<float*>(t.lse);
  for (int i = 0; i < 3; ++i) {
    forward.q_strides[i] = t.q_strides[i];
    forward.k_strides[i] = t.k_strides[i];
    forward.v_strides[i] = t.v_strides[i];
    forward.o_strides[i] = t.o_strides[i];
  }
  runtime->attention_forward(p.forward(), forward, stream_);
  reference.poison_output();
  runtime->attention_backward(p, t, stream_);
  const tune::OutputCheck result = reference.check_output();
  EXPECT_TRUE(result.passed) << result.detail << " (rel " << result.relative_error << ")";
}

}  // namespace
}  // namespace kt
