// `kerntune compile --arch sm_80` with the default device profile (h200, sm_90a): the configs are
// chosen for the built-in profile of that arch (a100), so attention compiles fa2 and GEMM sm80 or
// small-M kernels, never fa3 or sm90 ones that ptxas refuses for sm_80.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/cli_runner.hpp"

namespace {

using kt::testing::run_cli;

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

std::string scratch_db() {
  return (std::filesystem::temp_directory_path() /
          ("kt_cli_compile_arch_" + std::to_string(getpid()) + ".db"))
      .string();
}

TEST(CliCompileArch, AttentionForSm80CompilesFa2ConfigsWithTheDefaultProfile) {
  const kt::testing::CliResult r = run_cli(
      "compile --op attention --shape b=1,h=8,s=1024,d=128 --arch sm_80 --top 1", scratch_db());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "device profile a100")) << r.output;
  EXPECT_TRUE(contains(r.output, "fa2.")) << r.output;
  EXPECT_FALSE(contains(r.output, "fa3.")) << r.output;
  EXPECT_FALSE(contains(r.output, "COMPILE ERROR")) << r.output;
}

TEST(CliCompileArch, GemmForSm80CompilesSm80ConfigsWithTheDefaultProfile) {
  const kt::testing::CliResult r =
      run_cli("compile --shape 4096x4096x4096 --arch sm_80 --top 1", scratch_db());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "sm80.")) << r.output;
  EXPECT_FALSE(contains(r.output, "sm90.")) << r.output;
  EXPECT_FALSE(contains(r.output, "COMPILE ERROR")) << r.output;
}

}  // namespace
