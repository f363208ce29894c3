// The CLI over the op registry, without a GPU or NVRTC: `kerntune ops`, --op resolution, the
// RMSNorm shape syntax and its errors, and explain for every op.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/cli_runner.hpp"

namespace {

using kt::testing::run_cli;

std::string db_path() {
  return (std::filesystem::temp_directory_path() /
          ("kt_cli_ops_test_" + std::to_string(getpid()) + ".db"))
      .string();
}

TEST(CliOps, ListsEveryOpWithItsShapeSyntaxAndFlags) {
  const auto r = run_cli("ops", db_path());
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* text : {"gemm", "MxNxK", "attention", "--causal", "rmsnorm", "rows=R,hidden=H",
                           "--residual", "rmsnorm-ragged"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
}

TEST(CliOps, AnUnknownOpListsTheRegisteredOnes) {
  const auto r = run_cli("explain --op layernorm --shape rows=1,hidden=1", db_path());
  EXPECT_EQ(r.status, 1) << r.output;
  for (const char* text : {"'layernorm'", "gemm", "attention", "rmsnorm"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
}

TEST(CliOps, AMalformedRmsnormShapeNamesTheField) {
  const auto missing = run_cli("explain --op rmsnorm --shape rows=8192", db_path());
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("no hidden="), std::string::npos) << missing.output;
  const auto bad = run_cli("explain --op rmsnorm --shape rows=8192,hidden=4k", db_path());
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("hidden"), std::string::npos) << bad.output;
  const auto foreign = run_cli("explain --op rmsnorm --shape rows=8,hidden=8 --causal", db_path());
  EXPECT_EQ(foreign.status, 1);
  EXPECT_NE(foreign.output.find("--causal"), std::string::npos) << foreign.output;
}

TEST(CliOps, ExplainsAnRmsnormProblemWithTheModelsPick) {
  const auto r =
      run_cli("explain --op rmsnorm --shape rows=8192,hidden=5120 --residual", db_path());
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* text : {"rmsnorm:bf16:r8192.h5120.res", "model's pick: rms.", "predicted"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  std::filesystem::remove(db_path());
}

}  // namespace
