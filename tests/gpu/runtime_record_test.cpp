// Record mode through the runtime (GPU): a problem served without an exact tuned entry is
// appended to the manifest once, one with an exact entry is not, KERNTUNE_RECORD does the same as
// the option, and the stats say what was recorded and by which grade each kernel was served.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cache/database.hpp"
#include "core/manifest.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "gpu/gpu_fixture.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/scratch_dir.hpp"

namespace kt {
namespace {

using RuntimeRecord = testing::GpuTest;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(RuntimeRecord, ProblemsWithoutAnExactEntryAreAppendedOnce) {
  testing::ScratchDir dir;
  const std::string db_path = dir.file("k.db"), manifest = dir.file("recorded.manifest");
  GemmProblem tuned, untuned;
  parse_gemm_shape("1024x1024x1024", tuned);
  parse_gemm_shape("1000x1536x512", untuned);
  {
    // An exact measured entry for `tuned`: the model's pick, as if measured.
    cache::Database db = cache::Database::open(db_path);
    const std::string config =
        rt::model_ranked_configs(op_spec("gemm"), to_key(tuned), device_, 64 << 20, 1).front();
    db.set_winner({.key = {to_key(tuned), device_.fingerprint(), kBenchmarkProtocolVersion,
                           kGemmTemplateVersion},
                   .config_key = config,
                   .median_us = 10,
                   .run_id = "r"});
  }
  RuntimeOptions options;
  options.database_path = db_path;
  options.record_path = manifest;
  auto runtime = Runtime::open(options);
  EXPECT_EQ(runtime->prepare_gemm(tuned).grade, "exact");
  EXPECT_NE(runtime->prepare_gemm(untuned).grade, "exact");
  runtime->prepare_gemm(untuned);
  const Manifest m = parse_manifest(read_text(manifest), manifest);
  EXPECT_EQ(m.problem_keys, std::vector<std::string>{to_key(untuned)});
  ASSERT_EQ(m.devices.size(), 1u);
  EXPECT_EQ(m.devices[0].desc().fingerprint(), device_.fingerprint());
  const RuntimeStats stats = runtime->stats();
  EXPECT_EQ(stats.problems_recorded, 1);
  EXPECT_EQ(stats.kernels_by_grade.at("exact"), 1);

  // KERNTUNE_RECORD, with the option empty, records into its file.
  const std::string from_env = dir.file("env.manifest");
  ::setenv("KERNTUNE_RECORD", from_env.c_str(), 1);
  RuntimeOptions plain;
  plain.database_path = db_path;
  auto recorded_by_env = Runtime::open(plain);
  ::unsetenv("KERNTUNE_RECORD");
  recorded_by_env->prepare_gemm(untuned);
  EXPECT_EQ(parse_manifest(read_text(from_env), from_env).problem_keys.size(), 1u);
}

}  // namespace
}  // namespace kt
