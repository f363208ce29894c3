// RMSNorm's kernels under NVRTC without a GPU: the model's top configs for awkward and large
// hiddens compile for sm_90a and sm_80 with no spills, so does every persistent config of the
// space, the 8-wide configs move 16-byte vectors, and `kerntune tune --op rmsnorm` predicts and
// stores a winner.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/device_desc.hpp"
#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "support/cli_runner.hpp"

namespace kt {
namespace {

TEST(RmsnormCompile, ModelTopConfigsCompileWithoutSpills) {
  const OpSpec& op = op_spec("rmsnorm");
  const DeviceDesc& h200 = device_profile("h200");
  for (const char* key :
       {"rmsnorm:bf16:r8192.h4096", "rmsnorm:fp16:r4096.h16384.res", "rmsnorm:bf16:r8192.h13",
        "rmsnorm:bf16:r8192.h1000.res", "rmsnorm:bf16:r1.h5120"}) {
    const auto ranked = op.ranked_configs(key, h200);
    ASSERT_GE(ranked.size(), 2u) << key;
    for (std::size_t i = 0; i < 2; ++i) {
      for (const char* arch : {"sm_90a", "sm_80"}) {
        const gen::CompiledKernel k =
            gen::compile(gen::generate(op, key, ranked[i].config_key, "", arch));
        EXPECT_EQ(k.report.total_spill_bytes(), 0) << key << " " << ranked[i].config_key;
      }
    }
  }
}

TEST(RmsnormCompile, EveryPersistentConfigCompilesWithoutSpills) {
  const OpSpec& op = op_spec("rmsnorm");
  for (const auto& [profile, arch] : {std::pair{"h200", "sm_90a"}, std::pair{"a100", "sm_80"}}) {
    const DeviceDesc& device = device_profile(profile);
    for (const char* key : {"rmsnorm:bf16:r32768.h8192", "rmsnorm:bf16:r32768.h8192.res",
                            "rmsnorm:bf16:r32768.h16384", "rmsnorm:fp16:r4097.h5120.res",
                            "rmsnorm:bf16:r8193.h1000.res", "rmsnorm:bf16:r65536.h13"}) {
      int persistent = 0;
      for (const RankedConfigKey& ranked : op.ranked_configs(key, device)) {
        if (!ranked.config_key.ends_with(".pers")) continue;
        ++persistent;
        const gen::CompiledKernel k =
            gen::compile(gen::generate(op, key, ranked.config_key, "", arch));
        EXPECT_EQ(k.report.total_spill_bytes(), 0)
            << key << " " << ranked.config_key << " " << arch;
      }
      EXPECT_GT(persistent, 0) << key << " " << arch;
    }
  }
}

TEST(RmsnormCompile, EightWideConfigsMoveSixteenByteVectors) {
  const OpSpec& op = op_spec("rmsnorm");
  for (const char* config : {"rms.t128.r1.v8.reg", "rms.t256.r1.v8.smem", "rms.t512.r1.v8.2pass",
                             "rms.t256.r1.v8.reg.pers"}) {
    const std::string ptx =
        gen::compile_to_ptx(gen::generate(op, "rmsnorm:bf16:r64.h8192.res", config, "", "sm_90a"));
    EXPECT_NE(ptx.find("ld.global.v4.u32"), std::string::npos) << config;
    EXPECT_NE(ptx.find("st.global.v4.u32"), std::string::npos) << config;
  }
}

TEST(RmsnormCompile, TwoPassModeKeepsItsFirstReadCachedForTheSecond) {
  const OpSpec& op = op_spec("rmsnorm");
  const auto ptx = [&](const char* key, const char* config) {
    return gen::compile_to_ptx(gen::generate(op, key, config, "", "sm_90a"));
  };
  for (const char* key : {"rmsnorm:bf16:r64.h8192", "rmsnorm:bf16:r64.h8192.res"}) {
    const std::string two_pass = ptx(key, "rms.t512.r1.v8.2pass");
    EXPECT_NE(two_pass.find("ld.global.L1::evict_last.L2::cache_hint.v4.u32"), std::string::npos)
        << key;
    EXPECT_NE(two_pass.find("ld.global.L1::evict_first.L2::cache_hint.v4.u32"), std::string::npos)
        << key;
    EXPECT_NE(ptx(key, "rms.t1024.r1.v4.2pass").find("L2::cache_hint.v2.u32"), std::string::npos)
        << key;
    // The other modes read x once: no hints.
    EXPECT_EQ(ptx(key, "rms.t256.r1.v8.reg").find("cache_hint"), std::string::npos) << key;
    EXPECT_EQ(ptx(key, "rms.t256.r1.v8.smem").find("cache_hint"), std::string::npos) << key;
  }
}

TEST(RmsnormCompile, TuneWithoutAGpuStoresAPredictedWinner) {
  const std::string db = (std::filesystem::temp_directory_path() /
                          ("kt_rmsnorm_predict_" + std::to_string(getpid()) + ".db"))
                             .string();
  std::filesystem::remove(db);
  const auto tune = testing::run_cli(
      "tune --op rmsnorm --shape rows=4096,hidden=1000 --residual --candidates 3", db);
  EXPECT_EQ(tune.status, 0) << tune.output;
  EXPECT_NE(tune.output.find("winner"), std::string::npos) << tune.output;
  const auto ls = testing::run_cli("cache ls", db);
  EXPECT_NE(ls.output.find("rmsnorm:bf16:r4096.h1000.res"), std::string::npos) << ls.output;
  std::filesystem::remove(db);
}

}  // namespace
}  // namespace kt
