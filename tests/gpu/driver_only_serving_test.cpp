// Driver-only serving on the GPU: a bundle tuned for this GPU (predicting, from a manifest of its
// device line) is served by another process with the toolkit hidden (CUDA_HOME and
// KERNTUNE_NVRTC pointing nowhere): GEMM and attention calls launch from stored cubins, NVRTC is
// never loaded, and the first call's time is printed. `fleet verify` loads every winner's cubin
// here. The runtime serves the best grade whose cubin it has: a nearest-shape pick without a
// stored cubin gives way to this problem's predicted entry when it may not compile.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/database.hpp"
#include "core/manifest.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "gpu/gpu_fixture.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/cli_runner.hpp"
#include "support/isolation.hpp"
#include "support/scratch_dir.hpp"

namespace kt {
namespace {

namespace fs = std::filesystem;
using DriverOnlyServing = testing::GpuTest;

// The helper that serves a bundle: installed beside an installed test, else the build's.
std::string serve_bundle_executable() {
  if (const auto prefix = testing::installed_prefix())
    return (*prefix / "libexec" / "kerntune" / "kt_serve_bundle").string();
  return KT_SERVE_BUNDLE;
}

std::string kerntune(const std::string& args) {
  return testing::shell_quote(testing::cli_executable()) + " " + args;
}

TEST_F(DriverOnlyServing, ABundleServesWithTheToolkitHidden) {
  testing::use_built_worker();
  testing::ScratchDir dir;
  const std::optional<std::string> device = device_line(device_);
  if (!device) GTEST_SKIP() << "no built-in profile of this GPU's compute capability";
  const std::string manifest = dir.file("m.manifest"), shard = dir.file("shard.db");
  const std::string bundle = dir.file("bundle.db");
  const std::vector<std::string> problems = {"gemm:bf16:bf16:nt:4096x4096x4096",
                                             "gemm:bf16:bf16:nt:16x4096x4096",
                                             "attn:bf16:b2.hq16.hkv16.sq2048.sk2048.d128.causal"};
  {
    std::ofstream out(manifest);
    out << "kerntune-manifest 1\ntune candidates=4\n" << *device << "\n";
    for (const std::string& p : problems) out << problem_line(p) << "\n";
  }
  const testing::CliResult run = testing::run_shell(
      kerntune("fleet run --predict --manifest " + testing::shell_quote(manifest) + " --db " +
               testing::shell_quote(shard)));
  ASSERT_EQ(run.status, 0) << run.output;
  const testing::CliResult merge = testing::run_shell(kerntune(
      "fleet merge --out " + testing::shell_quote(bundle) + " " + testing::shell_quote(shard)));
  ASSERT_EQ(merge.status, 0) << merge.output;
  const testing::CliResult verify =
      testing::run_shell(kerntune("fleet verify " + testing::shell_quote(bundle)));
  EXPECT_EQ(verify.status, 0) << verify.output;
  EXPECT_NE(verify.output.find("3 loaded on"), std::string::npos) << verify.output;

  std::string command =
      "CUDA_HOME=/nonexistent CUDA_PATH=/nonexistent "
      "KERNTUNE_NVRTC=/nonexistent/libnvrtc.so " +
      testing::shell_quote(serve_bundle_executable()) + " " + testing::shell_quote(bundle);
  for (const std::string& p : problems) command += " " + p;
  const testing::CliResult served = testing::run_shell(command);
  std::printf("[ figures  ] %s", served.output.c_str());
  EXPECT_EQ(served.status, 0) << served.output;
  EXPECT_NE(served.output.find("\"nvrtc_loaded\": false"), std::string::npos) << served.output;
  EXPECT_NE(served.output.find("\"grade\": \"predicted\""), std::string::npos) << served.output;
}

TEST_F(DriverOnlyServing, ABetterGradeWithoutAStoredCubinGivesWayWhenItCannotCompile) {
  testing::ScratchDir dir;
  const std::string path = dir.file("k.db");
  const std::string problem = "gemm:bf16:bf16:nt:4000x4096x4096";
  const std::string neighbour = "gemm:bf16:bf16:nt:4096x4096x4096";
  const OpSpec& gemm = op_spec("gemm");
  const std::vector<std::string> picks =
      rt::model_ranked_configs(gemm, problem, device_, 64 << 20, 3);
  const std::string own = picks[0], other = picks[1], third = picks[2];
  {
    // This problem predicted, its cubin stored. At the neighbour, `other` ran ten times faster
    // than predicted and `third` as predicted: the model underrates `other` near here, so the
    // measurements rank it above this problem's prediction. Neither cubin is stored.
    cache::Database db = cache::Database::open(path);
    rt::get_or_compile(&db, gen::generate(gemm, problem, own, "", device_.arch()), true, true);
    db.set_winner(
        {.key = {problem, device_.fingerprint(), kBenchmarkProtocolVersion, kGemmTemplateVersion},
         .config_key = own,
         .median_us = gemm.predicted_us(problem, own, device_),
         .predicted = true,
         .run_id = "r"});
    const cache::TuningKey key{neighbour, device_.fingerprint(), kBenchmarkProtocolVersion,
                               kGemmTemplateVersion};
    std::vector<cache::Measurement> rows;
    for (const auto& [config, factor] : {std::pair{other, 0.1}, std::pair{third, 1.0}}) {
      cache::Measurement m;
      m.key = key;
      m.config_key = config;
      m.median_us = factor * gemm.predicted_us(neighbour, config, device_);
      m.num_reps = 10;
      m.run_id = "r";
      rows.push_back(m);
    }
    db.add_measurements(rows);
    db.set_winner({.key = key, .config_key = other, .median_us = rows[0].median_us, .run_id = "r"});
    const auto choices = rt::ranked_choices(&db, gemm, problem, device_, 64 << 20, 1);
    ASSERT_EQ(choices[0].grade, rt::DispatchGrade::kNearestShape) << choices[0].config_key;
    ASSERT_EQ(choices[0].config_key, other);
    const gen::GeneratedSource source = gen::generate(gemm, problem, other, "", device_.arch());
    ASSERT_TRUE(db.find_cubins_by_source(gen::source_key(source), source.arch).empty());
  }
  RuntimeOptions options;
  options.database_path = path;
  options.read_only = true;
  options.compile_on_miss = false;
  auto runtime = Runtime::open(options);
  GemmProblem p;
  parse_gemm_shape("4000x4096x4096", p);
  const DispatchInfo info = runtime->prepare_gemm(p);
  EXPECT_EQ(info.grade, "predicted");
  EXPECT_EQ(info.config_key, own);
  EXPECT_FALSE(info.compiled_now);
}

}  // namespace
}  // namespace kt
