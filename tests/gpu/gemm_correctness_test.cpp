// GEMM correctness on the GPU: every dtype pair, both B layouts, ragged shapes, split-K, on fresh
// random data with the output poisoned first, against a float64 reference (gemm_workload.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "gpu/gpu_fixture.hpp"
#include "ops/gemm/gemm_kernel.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/gemm_builders.hpp"
#include "support/precompile.hpp"

namespace kt {
namespace {

std::uint64_t fresh_seed() {
  return std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
}

class GemmCorrectness : public testing::GpuTest {
 protected:
  // One cubin cache for the whole tier, so a config compiles once across shapes.
  static cache::Database& cubin_cache() {
    static cache::Database db =
        cache::Database::open((std::filesystem::temp_directory_path() /
                               ("kt_gpu_cubins_" + std::to_string(::getpid()) + ".db"))
                                  .string());
    return db;
  }

  void check(const GemmProblem& p, const GemmConfig& config) {
    const std::string label = fmt::format("{} with {}", to_key(p), to_key(config));
    ASSERT_FALSE(validate(p, config, device_)) << label << ": " << *validate(p, config, device_);
    rt::ModuleCache modules;
    CUstream stream = nullptr;
    ASSERT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    {
      tune::GemmWorkload work(p, device_, nullptr, modules, stream, fresh_seed(),
                              std::size_t(workspace_bytes(p, config, device_.num_sms)));
      const auto cubin = rt::get_or_compile(
          &cubin_cache(), gen::generate_gemm(p, config, device_.arch()), true, true);
      const rt::GemmKernel kernel(p, config, modules.load(cubin.record));
      work.poison_output();
      ASSERT_EQ(kernel.launch(work.a(), work.b(), work.c(), work.workspace(), stream), CUDA_SUCCESS)
          << label;
      const tune::OutputCheck result = work.check_output();
      EXPECT_TRUE(result.passed) << label << ": " << result.detail;
      EXPECT_EQ(result.nonfinite, 0u) << label;
      EXPECT_LT(result.relative_error, result.tolerance) << label;
    }
    rt::driver().stream_destroy(stream);
  }

  // One kernel on one problem.
  struct KernelCase {
    GemmProblem problem;
    GemmConfig config;
  };

  // Every config on every problem of `shapes` × `layouts` × (input, output) dtype pairs that it
  // can run (split-K deeper than K and the like are left out).
  std::vector<KernelCase> valid_cases(const std::vector<GemmConfig>& configs,
                                      const std::vector<const char*>& shapes,
                                      const std::vector<Layout>& layouts,
                                      const std::vector<std::pair<DType, DType>>& dtypes) {
    std::vector<KernelCase> cases;
    for (const GemmConfig& config : configs)
      for (const char* shape : shapes)
        for (Layout layout : layouts)
          for (const auto& [in, out] : dtypes) {
            const GemmProblem p = testing::shaped_problem(shape, layout, in, out);
            if (!validate(p, config, device_)) cases.push_back({p, config});
          }
    return cases;
  }

  static std::vector<GemmConfig> parse_keys(const std::vector<const char*>& keys) {
    std::vector<GemmConfig> configs;
    for (const char* key : keys) configs.push_back(parse_gemm_config_key(key));
    return configs;
  }

  // Compiles the cases' kernels into the tier's cubin cache on every core (testing::precompile).
  void precompile(const std::vector<KernelCase>& cases) {
    std::vector<gen::GeneratedSource> sources;
    for (const KernelCase& c : cases)
      sources.push_back(gen::generate_gemm(c.problem, c.config, device_.arch()));
    testing::precompile(cubin_cache(), sources);
  }

  // check() of every case, their kernels compiled in parallel first; returns how many.
  int check_all(const std::vector<KernelCase>& cases) {
    precompile(cases);
    for (const KernelCase& c : cases) check(c.problem, c.config);
    return int(cases.size());
  }

  // check() of every config key on every shape, layout and (in, out) dtype pair it is valid for;
  // returns how many it checked.
  int check_valid(const std::vector<const char*>& keys, const std::vector<const char*>& shapes,
                  const std::vector<Layout>& layouts,
                  const std::vector<std::pair<DType, DType>>& dtypes) {
    return check_all(valid_cases(parse_keys(keys), shapes, layouts, dtypes));
  }

  // check_valid() on the nt layout.
  int check_nt(const std::vector<const char*>& keys, const std::vector<const char*>& shapes,
               const std::vector<std::pair<DType, DType>>& dtypes) {
    return check_valid(keys, shapes, {Layout::kNT}, dtypes);
  }

  // sm90 split-K launched again and again: key4 and key8 (two configs sharing one workspace),
  // each expected to reduce distributed or not.
  void repeated_launches(const char* shape, const char* key4, const char* key8, bool distributed);
};

TEST_F(GemmCorrectness, RaggedShapesEveryDtypeBothLayoutsModelDefault) {
  const char* shapes[] = {"127x129x65", "1x4096x4096", "4100x4096x4096",
                          "64x64x64",   "1x1x1",       "33x200x1000"};
  const DType pairs[][2] = {{DType::kBF16, DType::kBF16},
                            {DType::kFP16, DType::kFP16},
                            {DType::kBF16, DType::kFP32},
                            {DType::kFP16, DType::kFP32},
                            {DType::kBF16, DType::kFP16}};
  std::vector<KernelCase> cases;
  for (const char* shape : shapes)
    for (const auto& pair : pairs)
      for (Layout layout : {Layout::kNT, Layout::kNN}) {
        const GemmProblem p = testing::shaped_problem(shape, layout, pair[0], pair[1]);
        cases.push_back(
            {p, parse_gemm_config_key(
                    rt::model_ranked_configs(op_spec("gemm"), to_key(p), device_, 64 << 20, 1)
                        .front())});
      }
  check_all(cases);
}

// The measuring protocol times a GEMM rotating over copies of its operands: every copy must
// hold the checked inputs, and a kernel run on any copy must write that copy's C (its result,
// moved into the checked C, passes the check; a copy left poisoned or holding other inputs
// would not).
TEST_F(GemmCorrectness, EveryOperandSetTheProtocolRotatesOverHoldsTheCheckedInputs) {
  const GemmProblem p =
      testing::shaped_problem("33x200x1000", Layout::kNT, DType::kBF16, DType::kBF16);
  const GemmConfig config = parse_gemm_config_key(
      rt::model_ranked_configs(op_spec("gemm"), to_key(p), device_, 64 << 20, 1).front());
  const rt::CudaDriver& d = rt::driver();
  rt::ModuleCache modules;
  CUstream stream = nullptr;
  ASSERT_EQ(d.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  {
    tune::GemmWorkload work(p, device_, nullptr, modules, stream, fresh_seed(),
                            std::size_t(workspace_bytes(p, config, device_.num_sms)), 4);
    ASSERT_EQ(work.num_operand_sets(), 4);
    const auto cubin = rt::get_or_compile(
        &cubin_cache(), gen::generate_gemm(p, config, device_.arch()), true, true);
    const rt::GemmKernel kernel(p, config, modules.load(cubin.record));
    const std::size_t c_bytes = std::size_t(p.m * p.n) * size_bytes(p.out_dtype);
    for (int set = 0; set < work.num_operand_sets(); ++set) {
      const tune::GemmOperands o = work.operands(set);
      if (set > 0) {
        EXPECT_NE(o.b, work.b()) << "set " << set << " shares the checked B";
      }
      work.poison_output();  // the checked C; the other sets' C were poisoned when made
      ASSERT_EQ(kernel.launch(o.a, o.b, o.c, work.workspace(), stream), CUDA_SUCCESS);
      if (set > 0) {
        ASSERT_EQ(d.memcpy_dtod_async(reinterpret_cast<CUdeviceptr>(work.c()),
                                      reinterpret_cast<CUdeviceptr>(o.c), c_bytes, stream),
                  CUDA_SUCCESS);
      }
      const tune::OutputCheck result = work.check_output();
      EXPECT_TRUE(result.passed) << "set " << set << ": " << result.detail;
    }
  }
  d.stream_destroy(stream);
}

TEST_F(GemmCorrectness, HandPickedTilesIncludingSplitKOnRaggedShapes) {
  const std::vector<const char*> configs = {
      "sm80.bm128.bn256.bk32.wm64.wn64.s3.g8.sk1", "sm80.bm256.bn128.bk32.wm64.wn64.s3.g8.sk1",
      "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1", "sm80.bm128.bn128.bk64.wm64.wn64.s3.g1.sk1",
      "sm80.bm64.bn128.bk32.wm32.wn64.s4.g8.sk1", "sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1",
      "sm80.bm16.bn128.bk64.wm16.wn32.s4.g8.sk1", "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk4",
      "sm80.bm64.bn128.bk32.wm64.wn64.s5.g1.sk12", "sm80.bm16.bn64.bk64.wm16.wn16.s6.g8.sk3",
      // Eight warps whose unaligned (synchronous) loads of a k-tile fit registers all at once.
      "sm80.bm32.bn64.bk64.wm16.wn16.s3.g1.sk16", "sm80.bm64.bn64.bk64.wm32.wn16.s2.g1.sk4",
      "sm80.bm64.bn64.bk32.wm32.wn16.s4.g8.sk1",
      // 64 splits of a deep K, as cuBLASLt splits skinny unaligned problems.
      "sm80.bm64.bn64.bk64.wm16.wn32.s5.g1.sk64"};
  const int checked =
      check_valid(configs, {"127x129x1000", "300x520x4104", "1000x1000x777", "64x100x32760"},
                  {Layout::kNT, Layout::kNN}, {{DType::kBF16, DType::kBF16}});
  EXPECT_GE(checked, 60);
}

// The sm90 family on an sm_90a device: every shipped config, both layouts, bf16 and fp16, on
// shapes with M, N and K tails (K down to 8, the TMA stride minimum), single-k-tile units, and
// more tiles than SMs so that persistent CTAs wrap the stage ring across tiles.
TEST_F(GemmCorrectness, Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  // Left out where invalid: nn with N % 8 != 0, split-K deeper than K.
  const int checked = check_all(valid_cases(
      testing::shipped_sm90_configs(),
      {"1x8x8", "127x136x72", "129x129x64", "300x520x4104", "1000x1000x776", "257x264x8",
       "4096x4096x64", "2000x3000x200", "64x1032x1024"},
      {Layout::kNT, Layout::kNN}, {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}}));
  EXPECT_GE(checked, 200);
}

TEST_F(GemmCorrectness, Sm90WritesFp32AndMixedOutputs) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1", "sm90.bm64.bn128.bk64.s6.c1.e0.cl1.g8.sk1",
       "sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk4", "sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g8.sk1",
       "sm90.bm128.bn128.bk64.s4.c1.e2.cl2.g8.sk1", "sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk1",
       "sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk4"},
      {"300x520x4104"}, {Layout::kNT, Layout::kNN},
      {{DType::kBF16, DType::kFP32}, {DType::kFP16, DType::kFP32}, {DType::kBF16, DType::kFP16}});
  EXPECT_EQ(checked, 42);  // every one valid
}

// Clusters of 2 when the tile rows are odd (the second CTA of the last cluster row has no tile
// but must still load its half of B and meet the exit barrier), with fewer cluster units than
// clusters and more, K tails that put one CTA's half of an nn B atom wholly past K, and N tails
// that put a whole half of an nt B tile past N; every epilogue.
TEST_F(GemmCorrectness, Sm90ClustersWithOddTileRowsAndTails) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1", "sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk1",
       "sm90.bm64.bn64.bk64.s6.c1.e1.cl2.g8.sk1", "sm90.bm256.bn128.bk64.s4.c2.e1.cl2.g8.sk1",
       "sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk3"},
      {"1x8x8", "129x136x72", "300x520x4104", "64x1032x1024", "2000x3000x200", "4100x4096x4128",
       "384x64x8200", "130x96x2056"},
      {Layout::kNT, Layout::kNN}, {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}});
  EXPECT_GE(checked, 45);
}

// Pairs along N (cn2: horizontally adjacent tiles share A by multicast): odd tile columns (the
// last pair's second CTA loads its half of A and stores nothing), N, M and K tails, split-K in
// both reduction modes, direct and TMA-store epilogues, swapped decode tiles (two token tiles on
// one weight tile), both layouts, bf16 and fp16.
TEST_F(GemmCorrectness, Sm90PairsAlongNOnRaggedShapes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm64.bn32.bk64.s12.c1.e0.cn2.g8.sk1.swab",
       "sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g1.sk1.swab", "sm90.bm128.bn64.bk64.s8.c2.e0.cn2.g1.sk4",
       "sm90.bm128.bn128.bk64.s4.c2.e2.cn2.g8.sk1", "sm90.bm64.bn128.bk64.s6.c1.e1.cn2.g8.sk3",
       "sm90.bm256.bn128.bk64.s4.c2.e0.cn2.g8.sk1"},
      {"129x136x72", "300x520x4104", "64x1032x1024", "2000x3000x200", "130x96x2056", "64x4096x4096",
       "1x4104x4096", "40x2056x8", "100x4104x4096", "512x512x8192"},
      {Layout::kNT, Layout::kNN}, {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}});
  EXPECT_GE(checked, 120);
}

// Whether a sm90 split-K launch of `kernel` reduces distributed (every unit has a CTA, or a
// cluster, of its own: gemm_sm90.cuh) rather than through the serial reducer.
bool reduces_distributed(const GemmProblem& p, const GemmConfig& c, const rt::GemmKernel& kernel) {
  return cluster_units(p, c) * cluster_size(c) <= std::int64_t(kernel.plan().main.grid[0]);
}

// sm90 split-K, reduced in the kernel: 2, 3, 4, 8 and 16 splits (K not a multiple of splits x 64,
// so the last split is short), M and N tails, bf16 and fp16 in, bf16/fp16/FP32 out, nt and nn,
// direct and TMA-store epilogues, clusters of 2 with odd tile rows. Both reduction modes: few
// tiles (300x260x8200, 129x136x2056, 512x512x8192 at most splits, ...: every unit has a CTA, so
// the splits reduce distributed, each its stripe of columns; bn64 sk16 at 129x136x16392 has more
// splits than quads, so half of them reduce nothing) and many (1000x1000x7768, 1536x1536x8192: more
// units than SMs, the serial reducer, whose tiles' writers may run in an earlier wave).
TEST_F(GemmCorrectness, Sm90SplitKReducesInTheKernelOnRaggedShapes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const std::vector<const char*> shapes = {
      "300x520x4104", "129x136x2056", "1000x1000x7768", "512x512x32760", "1536x1536x8192",
      "64x1032x3000", "300x260x8200", "512x512x8192",   "129x136x16392", "64x100x32760"};
  const std::vector<const char*> keys = {
      "sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk2", "sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk3",
      "sm90.bm128.bn192.bk64.s4.c2.e2.cl1.g8.sk4", "sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk16",
      "sm90.bm128.bn128.bk64.s4.c2.e2.cl2.g8.sk8", "sm90.bm256.bn128.bk64.s4.c2.e1.cl2.g1.sk3",
      "sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8", "sm90.bm128.bn64.bk64.s4.c2.e0.cl1.g8.sk16",
      "sm90.bm64.bn32.bk64.s6.c1.e0.cl1.g8.sk3",   "sm90.bm64.bn64.bk64.s12.c1.e0.cl1.g8.sk32",
      "sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g1.sk64"};
  // Left out where invalid: e.g. 16 splits of a short K.
  const std::vector<KernelCase> cases =
      valid_cases(parse_keys(keys), shapes, {Layout::kNT, Layout::kNN},
                  {{DType::kBF16, DType::kBF16},
                   {DType::kFP16, DType::kFP16},
                   {DType::kBF16, DType::kFP32},
                   {DType::kFP16, DType::kFP32}});
  const int checked = check_all(cases);
  const auto distributed = std::count_if(cases.begin(), cases.end(), [&](const KernelCase& c) {
    return cluster_units(c.problem, c.config) <=
           std::max(1, device_.num_sms / cluster_size(c.config));
  });
  EXPECT_GE(checked, 450);  // 478 on the H200 profile: 326 distributed (as planned), 152 serial
  EXPECT_GE(distributed, 250);
  EXPECT_GE(checked - distributed, 120);
}

// sm90 split-K with a tile's splits in one cluster (clk), reduced through distributed shared
// memory: 2, 4 and 8 splits (the last one short), M, N and K tails, bf16 and fp16 in, bf16, fp16
// and FP32 out, nt and nn, one and two consumers, and more tiles than clusters fit at once
// (1000x1000, 2000x3000: clusters loop over tiles, loading the ring again after each reduction).
// The sum's order is the L2 modes', so C equals the same split count's cl1 config bitwise.
TEST_F(GemmCorrectness, Sm90ClusterSplitKOnRaggedShapesMatchesTheL2ReductionBitwise) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const std::vector<const char*> shapes = {"300x520x4104",  "129x136x2056", "1000x1000x7768",
                                           "512x512x32760", "64x1032x3000", "2000x3000x1000"};
  const std::vector<const char*> keys = {
      "sm90.bm128.bn128.bk64.s4.c2.e0.clk8.g8.sk8", "sm90.bm128.bn256.bk64.s4.c2.e0.clk4.g8.sk4",
      "sm90.bm64.bn128.bk64.s6.c1.e0.clk2.g8.sk2", "sm90.bm64.bn32.bk64.s12.c1.e0.clk4.g8.sk4",
      // Two m64 tiles a consumer: the sum's loop over them runs at run time.
      "sm90.bm256.bn128.bk64.s4.c2.e0.clk2.g8.sk2"};
  // Each case in a cluster, then the same split count through L2 (cluster_k 1).
  std::vector<KernelCase> both;
  for (const KernelCase& c : valid_cases(parse_keys(keys), shapes, {Layout::kNT, Layout::kNN},
                                         {{DType::kBF16, DType::kBF16},
                                          {DType::kFP16, DType::kFP16},
                                          {DType::kBF16, DType::kFP32}})) {
    KernelCase through_l2 = c;
    through_l2.config.cluster_k = 1;
    if (validate(through_l2.problem, through_l2.config, device_)) continue;
    both.push_back(c);
    both.push_back(through_l2);
  }
  precompile(both);
  const rt::CudaDriver& d = rt::driver();
  CUstream stream = nullptr;
  ASSERT_EQ(d.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  int checked = 0;
  for (std::size_t i = 0; i < both.size(); i += 2) {
    const GemmProblem& p = both[i].problem;
    const GemmConfig &in_cluster = both[i].config, &through_l2 = both[i + 1].config;
    const std::string label = fmt::format("{} with {}", to_key(p), to_key(in_cluster));
    rt::ModuleCache modules;
    tune::GemmWorkload work(p, device_, nullptr, modules, stream, fresh_seed(),
                            std::size_t(workspace_bytes(p, through_l2, device_.num_sms)));
    EXPECT_EQ(workspace_bytes(p, in_cluster, device_.num_sms), 0) << label;
    auto run = [&](const GemmConfig& c) {
      const auto cubin =
          rt::get_or_compile(&cubin_cache(), gen::generate_gemm(p, c, device_.arch()), true, true);
      const rt::GemmKernel kernel(p, c, modules.load(cubin.record));
      work.poison_output();
      EXPECT_EQ(kernel.launch(work.a(), work.b(), work.c(),
                              c.cluster_k > 1 ? nullptr : work.workspace(), stream),
                CUDA_SUCCESS)
          << label;
      const tune::OutputCheck result = work.check_output();
      EXPECT_TRUE(result.passed) << label << " (" << to_key(c) << "): " << result.detail;
      const std::size_t bytes = std::size_t(p.m * p.n) * size_bytes(p.out_dtype);
      std::vector<unsigned char> host(bytes);
      EXPECT_EQ(d.stream_synchronize(stream), CUDA_SUCCESS);
      EXPECT_EQ(d.memcpy_dtoh(host.data(), reinterpret_cast<CUdeviceptr>(work.c()), bytes),
                CUDA_SUCCESS);
      return host;
    };
    EXPECT_TRUE(run(in_cluster) == run(through_l2)) << label << ": not bitwise equal";
    ++checked;
  }
  d.stream_destroy(stream);
  EXPECT_GE(checked, 100);
}

// Swap-AB: the kernel computes C^T = B·A^T and stores it transposed. Decode steps (M = 1 to 64,
// M and N tails, K down to 8), a shape with several token tiles (M = 100), bf16 and fp16 in,
// bf16, fp16 and FP32 out, unsplit, split through L2 (both reduction modes: 1 x 4104 x 4096 has
// a CTA per unit, 100 x 4104 x 4096 with 32-token tiles more units than CTAs), split in cluster
// pairs, and pairs along the weights sharing the token tile.
TEST_F(GemmCorrectness, Sm90SwapAbOnDecodeAndRaggedShapes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_nt({"sm90.bm64.bn16.bk64.s12.c1.e0.cl1.g8.sk1.swab",
                                "sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g8.sk4.swab",
                                "sm90.bm128.bn16.bk64.s8.c2.e0.cl1.g8.sk2.swab",
                                "sm90.bm64.bn64.bk64.s12.c1.e0.clk2.g8.sk2.swab",
                                "sm90.bm64.bn64.bk64.s8.c1.e0.cl2.g8.sk1.swab"},
                               {"1x4104x4096", "16x1000x776", "64x4096x4096", "3x520x136",
                                "40x2056x8", "100x4104x4096", "1x8x8"},
                               {{DType::kBF16, DType::kBF16},
                                {DType::kFP16, DType::kFP16},
                                {DType::kBF16, DType::kFP32},
                                {DType::kFP16, DType::kFP32}});
  EXPECT_GE(checked, 110);
}

// Swap-AB past decode steps: token tiles fitted to M (any multiple of 8 columns: 88, 112, 136,
// 168, 200, 216), with M, N and K tails (an odd N: C's rows unaligned for pairs, its last column
// alone; N % 4 == 2: C's rows 4-byte aligned, each lane's four elements stored as two pairs),
// unsplit, split through L2, split in cluster pairs and in pairs along the weights sharing B's
// halves; bf16 and fp16 in, 16-bit (stored transposed across the warp) and FP32 out.
TEST_F(GemmCorrectness, Sm90SwapAbFittedTokenTilesOnRaggedShapes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_nt(
      {"sm90.bm256.bn88.bk64.s4.c2.e0.cl1.g8.sk1.swab",
       "sm90.bm128.bn200.bk64.s5.c2.e0.cl1.g1.sk1.swab",
       "sm90.bm128.bn168.bk64.s5.c2.e0.cl1.g1.sk4.swab",
       "sm90.bm128.bn216.bk64.s4.c2.e0.clk2.g8.sk2.swab",
       "sm90.bm128.bn112.bk64.s4.c2.e0.cl2.g8.sk1.swab",
       "sm90.bm256.bn136.bk64.s4.c2.e0.cl1.g8.sk1.swab",
       "sm90.bm128.bn144.bk64.s4.c1.e0.cl1.g8.sk1"},
      {"257x11264x2048", "300x1032x520", "1430x776x136", "97x4104x4096", "633x200x1000",
       "97x1001x136", "130x1030x264"},
      {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}, {DType::kBF16, DType::kFP32}});
  EXPECT_GE(checked, 70);
}

// Direct stores of 16-bit C in the kernel's orientation (e0, unswapped): lanes trade adjacent
// 8-column blocks, so tiles of an odd number of blocks (nt only: 136, 200, 88 and 24 columns)
// store their last one as pairs; rows 8-byte aligned (N % 4 == 0), 4-byte aligned (N % 4 == 2:
// the four stored as two pairs) and odd (element by element); M and N tails; split through L2;
// a cluster pair of even tiles in both layouts; bf16 and fp16.
TEST_F(GemmCorrectness, Sm90DirectStoresOfOddBlockTilesOnRaggedShapes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm128.bn136.bk64.s5.c2.e0.cl1.g1.sk1", "sm90.bm128.bn200.bk64.s4.c2.e0.cl1.g8.sk1",
       "sm90.bm64.bn88.bk64.s6.c1.e0.cl1.g8.sk3", "sm90.bm64.bn24.bk64.s8.c1.e0.cl1.g8.sk1",
       "sm90.bm128.bn128.bk64.s5.c2.e0.cl2.g1.sk1"},
      {"130x1030x264", "129x1031x200", "300x1028x520", "1000x1000x776", "64x4104x1024"},
      {Layout::kNT, Layout::kNN}, {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}});
  EXPECT_GE(checked, 54);
}

// Swap-AB with nn: the caller's K x N B is the kernel's M-major A (64 x 64 boxes, wgmma's A
// transpose bit), its A the kernel's K-major B. Decode steps and fitted token tiles, N (the
// kernel's M) not a whole number of 64-column atoms, M and K tails, unsplit, split through L2
// (both reduction modes), split in cluster pairs and pairs along M sharing the caller's A;
// bf16 and fp16 in, 16-bit and FP32 out.
TEST_F(GemmCorrectness, Sm90SwapAbWithNnOnRaggedShapes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm64.bn16.bk64.s12.c1.e0.cl1.g8.sk1.swab",
       "sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g8.sk4.swab",
       "sm90.bm128.bn16.bk64.s8.c2.e0.cl1.g8.sk2.swab",
       "sm90.bm64.bn64.bk64.s12.c1.e0.clk2.g8.sk2.swab",
       "sm90.bm64.bn64.bk64.s8.c1.e0.cl2.g8.sk1.swab",
       "sm90.bm256.bn88.bk64.s4.c2.e0.cl1.g8.sk1.swab",
       "sm90.bm128.bn200.bk64.s5.c2.e0.cl1.g1.sk1.swab",
       "sm90.bm128.bn168.bk64.s5.c2.e0.cl1.g1.sk4.swab",
       "sm90.bm128.bn112.bk64.s4.c2.e0.cl2.g8.sk1.swab",
       "sm90.bm256.bn136.bk64.s4.c2.e0.cl1.g8.sk1.swab"},
      {"1x4104x4096", "16x1000x776", "3x520x136", "40x2056x8", "100x4104x4096", "257x11264x2048",
       "300x1032x520", "1430x776x136", "633x200x1000"},
      {Layout::kNN},
      {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}, {DType::kBF16, DType::kFP32}});
  EXPECT_GE(checked, 200);
}

// Rows TMA cannot address: nn with N % 8 != 0 (B) and K % 8 != 0 (A, and B in nt), read by the
// sm90 family from copies padded into the workspace (gemm_pad_rows, then TMA over the copies).
// N and K tails of several residues mod 8, M tails, decode and deep-K shapes, both layouts;
// unsplit, split through L2 (both reduction modes), in cluster pairs along M and N, split in
// cluster pairs, stream-K, without a producer warpgroup and swapped (a padded B as the kernel's
// A); bf16 and fp16 in, 16-bit and FP32 out.
TEST_F(GemmCorrectness, Sm90PaddedCopiesOfUnalignedRows) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk1", "sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk4",
       "sm90.bm64.bn64.bk64.s8.c1.e0.cl1.g1.sk16", "sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk1",
       "sm90.bm128.bn128.bk64.s4.c2.e0.clk2.g8.sk2", "sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1.st",
       "sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk1.nows",
       "sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g8.sk4.swab",
       "sm90.bm256.bn88.bk64.s4.c2.e0.cl1.g8.sk1.swab",
       "sm90.bm128.bn128.bk64.s4.c2.e0.cn2.g8.sk1"},
      {"108x124x4096", "77x333x1032", "1x1001x776", "300x1001x520", "1430x777x136", "2049x4101x264",
       "300x500x4100", "77x333x1001", "1x1000x777"},
      {Layout::kNN, Layout::kNT},
      {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}, {DType::kBF16, DType::kFP32}});
  EXPECT_GE(checked, 3 * 49);
}

// nn's B with N % 8 != 0 but even, copied into the stages by the producer warpgroup (4-byte
// copies for N % 4 == 2, 8-byte for N % 4 == 0; sm90_mn_copies.cuh): N below one atom, N and M
// tails, K tails (A then padded), deep K and several waves of units; one and two consumers (the
// producer at 40 registers), split through L2 in both reduction modes, stages one to four atoms
// deep, swapped (the copied operand as the kernel's M-major A); bf16 and fp16 in, 16-bit and
// FP32 out.
TEST_F(GemmCorrectness, Sm90CopiedRowsOfEvenN) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk1", "sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk4",
       "sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g1.sk16", "sm90.bm64.bn64.bk256.s3.c1.e0.cl1.g8.sk1",
       "sm90.bm64.bn112.bk64.s9.c1.e0.cl1.g8.sk16.swab",
       "sm90.bm256.bn88.bk64.s4.c2.e0.cl1.g8.sk1.swab"},
      {"108x124x4096", "107x334x8192", "77x30x1032", "300x1002x520", "1430x778x136",
       "2049x4100x264", "300x500x4100", "1x1000x776", "65x204x16388"},
      {Layout::kNN},
      {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}, {DType::kBF16, DType::kFP32}});
  EXPECT_GE(checked, 3 * 38);
}

// Persistent CTAs over several waves walk K upward in even waves and downward in odd ones
// (serpentine K): shapes of two to six waves with K tails (the downward walk starts on the
// partial k-tile) and K of one k-tile plus a partial one, unpaired and in pairs, one- and
// two-atom stages, direct and TMA stores, with and without a producer warpgroup (without one,
// the consumers' loading thread runs a ring ahead across the units), both layouts, bf16 and fp16.
TEST_F(GemmCorrectness, Sm90PersistentWavesWalkKBothWays) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1", "sm90.bm128.bn256.bk64.s3.c2.e4.cl2.g16.sk1",
       "sm90.bm64.bn128.bk64.s6.c1.e0.cl1.g1.sk1", "sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1",
       "sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.nows",
       "sm90.bm64.bn128.bk64.s6.c1.e0.cl1.g1.sk1.nows"},
      {"4096x2048x1000", "2304x4160x200", "8200x264x72"}, {Layout::kNT, Layout::kNN},
      {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}});
  EXPECT_GE(checked, 40);
}

// Stages two or four swizzle atoms deep (bk128, bk256, nt): K that ends inside the first atom of
// a stage (the later boxes lie wholly past K, zero-filled) or inside a later one; unswapped,
// swapped, clusters of two sharing B, split-K through L2 and in a cluster.
TEST_F(GemmCorrectness, Sm90MultiAtomStagesOnRaggedK) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_nt(
      {"sm90.bm64.bn16.bk128.s6.c1.e0.cl1.g8.sk1.swab",
       "sm90.bm64.bn16.bk128.s6.c1.e0.clk2.g8.sk2.swab", "sm90.bm64.bn64.bk128.s6.c1.e1.cl1.g8.sk1",
       "sm90.bm128.bn128.bk128.s2.c2.e2.cl2.g8.sk1", "sm90.bm128.bn64.bk128.s4.c2.e0.cl1.g8.sk4",
       "sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g8.sk1.swab", "sm90.bm64.bn32.bk256.s4.c1.e1.cl1.g8.sk1"},
      {"16x4096x4096", "1x4104x8", "64x1000x200", "100x4104x136", "300x520x72", "257x1000x1304"},
      {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP32}});
  EXPECT_GE(checked, 64);
}

// The same stages with nn: B's N-major atoms (and, swapped, the kernel's M-major A's) are boxes
// of 64 columns by the stage's 128 or 256 K-rows. K ending inside a stage's first or later
// atom, one and two consumers (an M-major A's consumers own whole atoms), clusters of two
// sharing B's K-row halves, split-K through L2 and in a cluster, N % 8 != 0 (padded copies).
TEST_F(GemmCorrectness, Sm90MultiAtomStagesWithNnOnRaggedK) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_valid(
      {"sm90.bm64.bn64.bk128.s6.c1.e1.cl1.g8.sk1", "sm90.bm128.bn128.bk128.s2.c2.e2.cl2.g8.sk1",
       "sm90.bm128.bn64.bk128.s4.c2.e0.cl1.g8.sk4", "sm90.bm64.bn64.bk256.s3.c1.e0.cl1.g8.sk1",
       "sm90.bm64.bn16.bk128.s6.c1.e0.cl1.g8.sk1.swab",
       "sm90.bm128.bn32.bk128.s4.c2.e0.cl1.g8.sk1.swab",
       "sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk4.swab",
       "sm90.bm64.bn16.bk128.s6.c1.e0.clk2.g8.sk2.swab",
       "sm90.bm64.bn32.bk256.s4.c1.e0.cl1.g8.sk1.swab"},
      {"16x4096x4096", "1x4104x8", "64x1000x200", "100x4104x136", "300x520x72", "257x1000x1304",
       "108x124x4100"},
      {Layout::kNN}, {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP32}});
  EXPECT_GE(checked, 80);
}

// 16- and 32-column tiles in cluster pairs (each CTA multicasts 8 or 16 rows of B, one or two
// whole swizzle periods), swapped and not, one- and two-atom stages, direct and TMA stores; odd
// tile rows (the last pair's second CTA stores nothing).
TEST_F(GemmCorrectness, Sm90NarrowTilesInClusterPairs) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const int checked = check_nt(
      {"sm90.bm64.bn16.bk64.s12.c1.e0.cl2.g8.sk1.swab",
       "sm90.bm64.bn16.bk128.s8.c1.e0.cl2.g8.sk1.swab",
       "sm90.bm64.bn32.bk128.s6.c1.e0.cl2.g8.sk1.swab", "sm90.bm64.bn32.bk64.s8.c1.e1.cl2.g8.sk1"},
      {"16x4096x4096", "16x4104x200", "64x1000x8", "40x4168x1304", "4104x40x136"},
      {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP32}});
  EXPECT_GE(checked, 36);
}

// The launch epoch lives in the workspace: the same split-K kernel launched again and again (on
// new data, through one reused parameter block, and alternating with another split-K config
// whose flags sit at other offsets of the same flag region) is correct every time, and the
// reduction order is fixed, so equal inputs give bitwise equal outputs.
// Both reduction modes: 1000x1000x7768 has more units than SMs for both configs (the serial
// reducer); 300x264x8200 and 512x512x8192 give every unit a CTA (distributed, each split
// reducing a stripe).
TEST_F(GemmCorrectness, Sm90SplitKRepeatedLaunchesAreCorrectAndBitwiseReproducible) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  repeated_launches("1000x1000x7768", "sm90.bm128.bn192.bk64.s4.c2.e2.cl1.g8.sk4",
                    "sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk8", false);
  repeated_launches("300x264x8200", "sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8",
                    "sm90.bm128.bn128.bk64.s4.c2.e0.cl2.g8.sk8", true);
  repeated_launches("512x512x8192", "sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk16",
                    "sm90.bm128.bn128.bk64.s4.c2.e2.cl2.g8.sk4", true);
}

// sm90 stream-K: regions of the last partial wave (2000x3000 at 128 x 128: 2 waves + 120 tiles),
// of that plus a wave (2176x1024: 136 tiles, so a CTA's range spans up to three tiles, the middle
// one whole), and of every unit (fewer tiles than SMs: 1000x1000, 1500x2300; 300x264x8200 cuts
// each tile among ~14 CTAs; 127x136x72 leaves most CTAs without a piece); K tails, one k-tile
// (257x264x8), bf16 and fp16 in, FP32 out, nt and nn, both epilogues, one and two consumers,
// stages two atoms deep, and the tightest ring that holds a peer's partial tile (128 x 256 with
// three stages). Then repeated launches sharing a workspace with split-K.
TEST_F(GemmCorrectness, Sm90StreamKOnRaggedShapes) {
  if (device_.arch() != "sm_90a") GTEST_SKIP() << "the sm90 family needs an sm_90a device";
  const std::vector<const char*> keys = {"sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk1.st",
                                         "sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1.st",
                                         "sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1.st",
                                         "sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1.st",
                                         "sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1.st",
                                         "sm90.bm256.bn128.bk64.s4.c2.e0.cl1.g8.sk1.st",
                                         "sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g8.sk1.st"};
  const std::vector<KernelCase> cases = valid_cases(
      parse_keys(keys),
      {"2000x3000x200", "2176x1024x1000", "1000x1000x776", "1500x2304x1000", "300x264x8200",
       "127x136x72", "257x264x8"},
      {Layout::kNT, Layout::kNN}, {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP32}});
  const auto streaming = std::count_if(cases.begin(), cases.end(), [&](const KernelCase& c) {
    return stream_k_region(c.problem, c.config, device_.num_sms).units > 0;
  });
  const int checked = check_all(cases);
  EXPECT_GE(checked, 160);  // 168 on the H200 profile, every one with a stream-K region
  EXPECT_EQ(streaming, checked);
  repeated_launches("2176x1024x1000", "sm90.bm128.bn128.bk64.s5.c2.e2.cl1.g8.sk1.st",
                    "sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk4", false);
}

void GemmCorrectness::repeated_launches(const char* shape, const char* key4, const char* key8,
                                        bool distributed) {
  GemmProblem p;
  parse_gemm_shape(shape, p);
  SCOPED_TRACE(shape);
  const GemmConfig sk4 = parse_gemm_config_key(key4);
  const GemmConfig sk8 = parse_gemm_config_key(key8);
  ASSERT_FALSE(validate(p, sk4, device_));
  ASSERT_FALSE(validate(p, sk8, device_));
  const rt::CudaDriver& d = rt::driver();
  rt::ModuleCache modules;
  CUstream stream = nullptr;
  ASSERT_EQ(d.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  {
    const int sms = device_.num_sms;
    const std::size_t ws =
        std::size_t(std::max(workspace_bytes(p, sk4, sms), workspace_bytes(p, sk8, sms)));
    tune::GemmWorkload first(p, device_, nullptr, modules, stream, fresh_seed(), ws);
    tune::GemmWorkload second(p, device_, nullptr, modules, stream, fresh_seed() + 1, 0);
    auto kernel_for = [&](const GemmConfig& c) {
      const auto cubin =
          rt::get_or_compile(&cubin_cache(), gen::generate_gemm(p, c, device_.arch()), true, true);
      return rt::GemmKernel(p, c, modules.load(cubin.record));
    };
    const rt::GemmKernel k4 = kernel_for(sk4), k8 = kernel_for(sk8);
    EXPECT_EQ(reduces_distributed(p, sk4, k4), distributed) << key4;
    EXPECT_EQ(reduces_distributed(p, sk8, k8), distributed) << key8;
    const std::size_t c_bytes = std::size_t(p.m * p.n) * size_bytes(p.out_dtype);
    auto output = [&](const tune::GemmWorkload& w) {
      std::vector<unsigned char> host(c_bytes);
      EXPECT_EQ(d.stream_synchronize(stream), CUDA_SUCCESS);
      EXPECT_EQ(d.memcpy_dtoh(host.data(), reinterpret_cast<CUdeviceptr>(w.c()), c_bytes),
                CUDA_SUCCESS);
      return host;
    };
    auto run_checked = [&](const rt::GemmKernel& k, tune::GemmWorkload& w, const char* what) {
      w.poison_output();
      // Every launch uses the first workload's workspace, whatever data it reads.
      EXPECT_EQ(k.launch(w.a(), w.b(), w.c(), first.workspace(), stream), CUDA_SUCCESS) << what;
      const tune::OutputCheck result = w.check_output();
      EXPECT_TRUE(result.passed) << what << ": " << result.detail;
      return output(w);
    };
    const std::vector<unsigned char> reference = run_checked(k4, first, "first launch");
    EXPECT_EQ(run_checked(k4, first, "same data again"), reference);
    run_checked(k4, second, "new data");
    run_checked(k8, first, "another config's flags");
    EXPECT_EQ(run_checked(k4, first, "back to the first config"), reference);
    run_checked(k8, second, "another config, new data");

    // One parameter block, launched three times back to back without a check in between.
    GemmSm90Params params;
    ASSERT_EQ(k4.make_sm90_params(first.a(), first.b(), first.c(), first.workspace(), params),
              CUDA_SUCCESS);
    first.poison_output();
    for (int i = 0; i < 3; ++i) ASSERT_EQ(k4.launch_main(&params, stream), CUDA_SUCCESS) << i;
    const tune::OutputCheck again = first.check_output();
    EXPECT_TRUE(again.passed) << again.detail;
    EXPECT_EQ(output(first), reference);
  }
  d.stream_destroy(stream);
}

// The small-M family (sm_80 and later): every shipped config, both layouts, bf16 and fp16, at
// M = 1, 3, 16, 17 and 64 with N and K tails (N % 16 != 0, N = 1 for nt, K down to 8 and not a
// multiple of any batch depth), K shorter than one batch per warp, and split-K.
TEST_F(GemmCorrectness, SmallMShippedConfigsOnRaggedShapesBothLayoutsBothDTypes) {
  // Left out where invalid: nn needs warp_n 64 and N % 8 == 0; split-K deeper than K.
  const int checked = check_all(valid_cases(
      testing::shipped_small_m_configs(),
      {"1x4096x4096", "3x1000x776", "16x4104x200", "17x72x4104", "64x520x1032", "64x136x8",
       "17x129x1024", "3x1x64", "1x8x8", "64x4096x4096"},
      {Layout::kNT, Layout::kNN}, {{DType::kBF16, DType::kBF16}, {DType::kFP16, DType::kFP16}}));
  EXPECT_GE(checked, 300);
}

TEST_F(GemmCorrectness, SmallMWritesFp32AndMixedOutputs) {
  // Left out where invalid: nn needs warp_n 64.
  const int checked =
      check_valid({"smallm.bm8.bn64.bk64.wn64.wk4.sk1", "smallm.bm64.bn32.bk32.wn32.wk4.sk4",
                   "smallm.bm16.bn64.bk64.wn64.wk4.sk2"},
                  {"17x520x1032"}, {Layout::kNT, Layout::kNN},
                  {{DType::kBF16, DType::kFP32},
                   {DType::kFP16, DType::kFP32},
                   {DType::kBF16, DType::kFP16},
                   {DType::kFP16, DType::kBF16}});
  EXPECT_GE(checked, 16);
}

}  // namespace
}  // namespace kt
