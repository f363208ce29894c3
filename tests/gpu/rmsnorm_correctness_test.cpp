// RMSNorm on the GPU: fresh random x, w (and r), y and the sum poisoned first, against a float64
// reference on sampled rows (the op's own workload, tuner/op_tuning.hpp), for every mode, vector
// width and awkward hidden, the persistent grid on ragged rows included; and end to end through
// Runtime::rmsnorm and the persistent kernel, in place residual included, and benchmark mode.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "gpu/gpu_fixture.hpp"
#include "kerntune/kerntune.hpp"
#include "ops/rmsnorm/rmsnorm_config.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/op_launcher.hpp"
#include "tuner/op_tuning.hpp"

namespace kt {
namespace {

class RmsnormCorrectness : public testing::GpuTest {
 protected:
  static std::string db_path() {
    return (std::filesystem::temp_directory_path() /
            ("kt_gpu_rmsnorm_" + std::to_string(::getpid()) + ".db"))
        .string();
  }
  static cache::Database& cubin_cache() {
    static cache::Database db = cache::Database::open(db_path());
    return db;
  }

  // The op's workload checks `config` (which must be valid) on fresh random data.
  void check(const std::string& problem_key, const std::string& config) {
    const OpEntry& op = OpRegistry::instance().by_key(problem_key);
    if (auto why = op.spec->validate_config(problem_key, config, device_)) {
      ADD_FAILURE() << problem_key << " " << config << " is not valid: " << *why;
      return;
    }
    rt::ModuleCache modules;
    CUstream stream = nullptr;
    ASSERT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    {
      auto target = op.tuning->make_bench_target(
          {problem_key, device_, &cubin_cache(), &modules, stream,
           std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()), 0});
      const auto cubin = rt::get_or_compile(
          &cubin_cache(), gen::generate(*op.spec, problem_key, config, "", device_.arch()), true,
          true);
      target->load(config, cubin.record);
      target->poison_output();
      ASSERT_EQ(target->launch(config, stream, 0), CUDA_SUCCESS);
      const tune::OutputCheck c = target->check_output();
      EXPECT_TRUE(c.passed) << problem_key << " " << config << ": " << c.detail;
      EXPECT_EQ(c.nonfinite, 0u) << problem_key << " " << config;
    }
    rt::driver().stream_destroy(stream);
  }

  // `launch` normalizes fresh random bf16 data of `p` (which has the residual) with the sum
  // written in place over r (residual_out == residual) or, not `in_place`, to a buffer of its
  // own; y and the sum against a float64 reference of every row.
  void check_residual(const RmsnormProblem& p, bool in_place,
                      const std::function<void(const RmsnormTensors&)>& launch) {
    const std::size_t bytes = std::size_t(p.rows * p.hidden) * 2;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> uniform(-1, 1);
    auto random_bf16 = [&](std::size_t n) {
      std::vector<std::uint16_t> v(n);
      for (auto& e : v) {
        const float f = uniform(rng);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        e = std::uint16_t(bits >> 16);
      }
      return v;
    };
    auto to_float = [](std::uint16_t h) {
      const std::uint32_t bits = std::uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    };
    const auto x = random_bf16(p.rows * p.hidden), r = random_bf16(p.rows * p.hidden),
               w = random_bf16(p.hidden);
    rt::DeviceBuffer dx(bytes), dr(bytes), dw(std::size_t(p.hidden) * 2), dy(bytes),
        dsum(in_place ? 16 : bytes);
    const rt::CudaDriver& d = rt::driver();
    EXPECT_EQ(d.memcpy_htod(dx.get(), x.data(), bytes), CUDA_SUCCESS);
    EXPECT_EQ(d.memcpy_htod(dr.get(), r.data(), bytes), CUDA_SUCCESS);
    EXPECT_EQ(d.memcpy_htod(dw.get(), w.data(), w.size() * 2), CUDA_SUCCESS);
    EXPECT_EQ(d.memset_d8_async(dy.get(), 0xFF, bytes, nullptr), CUDA_SUCCESS);  // NaN poison
    if (!in_place) {
      EXPECT_EQ(d.memset_d8_async(dsum.get(), 0xFF, bytes, nullptr), CUDA_SUCCESS);
    }
    void* const sum_out = in_place ? dr.data() : dsum.data();
    RmsnormTensors t{dx.data(), dw.data(), dy.data(), dr.data(), sum_out, 1e-5f};
    launch(t);
    EXPECT_EQ(d.ctx_synchronize(), CUDA_SUCCESS);
    std::vector<std::uint16_t> y(p.rows * p.hidden), sum(p.rows * p.hidden);
    EXPECT_EQ(d.memcpy_dtoh(y.data(), dy.get(), bytes), CUDA_SUCCESS);
    EXPECT_EQ(d.memcpy_dtoh(sum.data(), in_place ? dr.get() : dsum.get(), bytes), CUDA_SUCCESS);
    double err = 0, norm = 0, sum_err = 0;
    for (std::int64_t i = 0; i < p.rows; ++i) {
      double squares = 0;
      for (std::int64_t j = 0; j < p.hidden; ++j) {
        const double s = double(to_float(x[i * p.hidden + j])) + to_float(r[i * p.hidden + j]);
        squares += s * s;
        sum_err =
            std::max(sum_err, std::abs(to_float(sum[i * p.hidden + j]) - s) / (std::abs(s) + 1e-3));
      }
      const double scale = 1 / std::sqrt(squares / double(p.hidden) + 1e-5);
      for (std::int64_t j = 0; j < p.hidden; ++j) {
        const double s = double(to_float(x[i * p.hidden + j])) + to_float(r[i * p.hidden + j]);
        const double ref = s * scale * to_float(w[j]);
        const double got = to_float(y[i * p.hidden + j]);
        EXPECT_TRUE(std::isfinite(got)) << i << "," << j;
        err += (got - ref) * (got - ref);
        norm += ref * ref;
      }
    }
    EXPECT_LT(std::sqrt(err / norm), 1e-2);
    EXPECT_LT(sum_err, 1e-2);  // the sum, rounded to bf16
  }
};

TEST_F(RmsnormCorrectness, EveryModeAndVectorWidth) {
  for (const char* key : {"rmsnorm:bf16:r1027.h4096", "rmsnorm:fp16:r515.h4096.res"})
    for (const char* config :
         {"rms.t512.r1.v8.reg", "rms.t64.r4.v8.reg", "rms.t128.r2.v4.smem", "rms.t64.r1.v2.2pass",
          "rms.t256.r1.v1.2pass", "rms.t1024.r1.v4.reg", "rms.t16.r8.v8.smem"})
      check(key, config);
}

TEST_F(RmsnormCorrectness, PeeledRowsOfOddHiddens) {
  const std::vector<std::pair<const char*, std::vector<const char*>>> cases = {
      {"rmsnorm:bf16:r1031.h7137",
       {"rms.t256.r1.v8.reg", "rms.t512.r1.v4.reg", "rms.t64.r2.v4.smem", "rms.t128.r1.v8.2pass",
        "rms.t256.r2.v4.reg"}},
      {"rmsnorm:fp16:r777.h1001.res",
       {"rms.t32.r4.v8.reg", "rms.t64.r2.v4.smem", "rms.t16.r4.v8.2pass"}},
      {"rmsnorm:bf16:r515.h13.res", {"rms.t8.r4.v2.reg", "rms.t8.r8.v4.reg"}},
      {"rmsnorm:bf16:r64.h4103", {"rms.t512.r1.v8.reg", "rms.t256.r2.v4.smem"}}};
  for (const auto& [key, configs] : cases)
    for (const char* config : configs) check(key, config);
}

TEST_F(RmsnormCorrectness, AwkwardHiddensWithTheModelsTopConfigs) {
  for (const char* key :
       {"rmsnorm:bf16:r4099.h13", "rmsnorm:bf16:r333.h1000.res", "rmsnorm:fp16:r1.h5120",
        "rmsnorm:bf16:r64.h65536.res", "rmsnorm:bf16:r7.h1", "rmsnorm:bf16:r2049.h5120.res"}) {
    const auto ranked = op_spec("rmsnorm").ranked_configs(key, device_);
    ASSERT_FALSE(ranked.empty()) << key;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, ranked.size()); ++i)
      check(key, ranked[i].config_key);
  }
}

TEST_F(RmsnormCorrectness, RuntimeServesInPlaceResidualAndRefusesBadCalls) {
  RuntimeOptions o;
  o.database_path = db_path();
  auto runtime = Runtime::open(o);
  const RmsnormProblem p{300, 2048, DType::kBF16, true};
  check_residual(p, true, [&](const RmsnormTensors& t) {
    runtime->rmsnorm(p, t);
    // Refused before any launch, so the check above sees only the first call.
    RmsnormTensors misaligned = t;
    misaligned.x = static_cast<const char*>(t.x) + 2;
    EXPECT_THROW(runtime->rmsnorm(p, misaligned), Error);
    RmsnormTensors no_residual = t;
    no_residual.residual = nullptr;
    EXPECT_THROW(runtime->rmsnorm(p, no_residual), Error);
  });
  EXPECT_EQ(runtime->prepare_rmsnorm(p).grade, "model-default");
}

// Benchmark mode times a first call's candidates on a copy of it that writes scratch only (an
// in-place sum over a scratch copy of r), then launches the fastest on the call itself: r holds
// x + r once, not once per timed launch. Against the reference, the sum in place and apart.
TEST_F(RmsnormCorrectness, RuntimeBenchmarksFirstCallsInPlaceResidualIncluded) {
  RuntimeOptions o;
  o.database_path = db_path();
  o.benchmark_candidates = 6;
  auto runtime = Runtime::open(o);
  for (const bool in_place : {false, true}) {
    const RmsnormProblem p{1031, in_place ? 4096 : 4104, DType::kBF16, true};
    check_residual(p, in_place, [&](const RmsnormTensors& t) { runtime->rmsnorm(p, t); });
    const DispatchInfo info = runtime->prepare_rmsnorm(p);
    EXPECT_EQ(info.grade, "benchmarked") << in_place;
    EXPECT_GE(info.configs_timed, 2) << in_place;
    EXPECT_LE(info.configs_timed, 6) << in_place;
  }
}

// The persistent grid on rows fewer than its CTAs (1, 7), rows that are no multiple of anything
// and loop several times per CTA, peeled and unpeeled hiddens, with and without the residual.
TEST_F(RmsnormCorrectness, PersistentGridOnRaggedShapes) {
  const std::vector<std::pair<std::vector<const char*>, std::vector<const char*>>> cases = {
      {{"rmsnorm:bf16:r1.h13", "rmsnorm:bf16:r7.h13.res", "rmsnorm:bf16:r40009.h13.res",
        "rmsnorm:fp16:r1031.h13"},
       {"rms.t8.r4.v2.reg.pers", "rms.t8.r8.v4.reg.pers", "rms.t8.r32.v1.reg.pers"}},
      {{"rmsnorm:bf16:r7.h1000", "rmsnorm:fp16:r1031.h1000.res", "rmsnorm:bf16:r70001.h1000.res",
        "rmsnorm:bf16:r1031.h1001.res"},
       {"rms.t32.r4.v8.reg.pers", "rms.t64.r2.v4.reg.pers", "rms.t128.r1.v2.reg.pers"}},
      {{"rmsnorm:bf16:r1.h5120", "rmsnorm:bf16:r1031.h5120.res", "rmsnorm:fp16:r7.h5120.res",
        "rmsnorm:bf16:r1031.h5123"},
       {"rms.t256.r1.v8.reg.pers", "rms.t128.r1.v4.reg.pers", "rms.t512.r1.v4.reg.pers"}},
      {{"rmsnorm:bf16:r1.h8192.res", "rmsnorm:bf16:r7.h8192", "rmsnorm:bf16:r1031.h8192.res",
        "rmsnorm:fp16:r4099.h8192", "rmsnorm:bf16:r1031.h7137.res"},
       {"rms.t256.r1.v8.reg.pers", "rms.t512.r1.v8.reg.pers", "rms.t1024.r1.v8.reg.pers"}}};
  for (const auto& [keys, configs] : cases)
    for (const char* key : keys)
      for (const char* config : configs) check(key, config);
}

TEST_F(RmsnormCorrectness, PersistentGridWritesTheSumInPlace) {
  const OpEntry& op = OpRegistry::instance().by_name("rmsnorm");
  for (const auto& [p, config] : std::vector<std::pair<RmsnormProblem, const char*>>{
           {{1031, 5120, DType::kBF16, true}, "rms.t256.r1.v8.reg.pers"},
           {{7, 8192, DType::kBF16, true}, "rms.t256.r1.v8.reg.pers"},
           {{4099, 1001, DType::kBF16, true}, "rms.t64.r2.v4.reg.pers"}}) {
    const std::string key = to_key(p);
    ASSERT_FALSE(op.spec->validate_config(key, config, device_)) << key << " " << config;
    rt::ModuleCache modules;
    const auto cubin = rt::get_or_compile(
        &cubin_cache(), gen::generate(*op.spec, key, config, "", device_.arch()), true, true);
    const auto kernel = op.launcher->load(key, config, modules.load(cubin.record));
    check_residual(p, true, [&](const RmsnormTensors& t) {
      kernel->check_call(&t);
      EXPECT_EQ(kernel->launch(&t, 0, nullptr), CUDA_SUCCESS) << key << " " << config;
    });
  }
}

}  // namespace
}  // namespace kt
