// Bad input on the command line, table-driven: each case exits 1 with one error line that names
// the bad value, for GEMM and attention shapes, config keys, dtypes, layouts and ops.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_runner.hpp"

namespace {

struct CliCase {
  const char* args;
  std::vector<std::string> needles;
};

class CliBadInput : public ::testing::TestWithParam<CliCase> {};

TEST_P(CliBadInput, ExitsOneNamingTheBadValue) {
  const std::string db = std::filesystem::temp_directory_path() /
                         ("kt_cli_bad_input_" + std::to_string(::getpid()) + ".db");
  const kt::testing::CliResult r = kt::testing::run_cli(GetParam().args, db);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("kerntune: invalid argument: "), std::string::npos) << r.output;
  for (const std::string& needle : GetParam().needles)
    EXPECT_NE(r.output.find(needle), std::string::npos) << "no '" << needle << "' in:\n"
                                                        << r.output;
}

const CliCase kCases[] = {
    {"explain --shape -64x64x64", {"M = -64"}},
    {"explain --shape 64x0x64", {"N = 0"}},
    {"explain --shape 64x64x", {"K in '64x64x' is empty"}},
    {"explain --shape 64x64x64x", {"64x64x64x", "MxNxK"}},
    {"explain --shape 64x64x64abc", {"'64abc' is not an integer"}},
    {"explain --shape 18446744073709551616x1x1", {"out of range"}},
    {"explain --shape 4294967296x1x1", {"exceeds 2^31-1"}},
    {"explain --shape 65536x65536x8", {"C (MxN) has 65536x65536 elements"}},
    {"explain --shape banana", {"banana", "MxNxK"}},
    {"explain --shape 64x64x64 --dtype fp32", {"inputs must be bf16 or fp16"}},
    {"explain --shape 64x64x64 --out-dtype int4", {"int4"}},
    {"explain --shape 64x64x64 --layout tt", {"tt", "nn", "nt"}},
    {"explain --shape 64x64x64 --op conv2d", {"'conv2d'", "gemm", "attention"}},
    {"explain --shape 64x64x64 --config sm80.bm128.bn128", {"not a GEMM config key"}},
    {"explain --shape 64x64x64 --config sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk01",
     {"not canonical"}},
    {"explain --shape 64x64x64 --config sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk99999",
     {"'sk' = 99999 is out of range"}},
    {"explain --op attention --shape b=1,h=8,s=128", {"lacks the head dimension d"}},
    {"explain --op attention --shape b=1,h=8,hkv=2,s=128,d=64", {"sets 'hkv' twice"}},
    {"explain --op attention --shape b=1,h=8,s=128,d=64,s=4", {"sets 's' twice"}},
    {"explain --op attention --shape b=1,h=8,s=0x10,d=64", {"'0x10' is not an integer"}},
    {"explain --op attention --shape b=1,h=8,s=128,d=64,q=1",
     {"unknown attention shape field 'q'"}},
    {"explain --op attention --shape b=-1,h=8,s=128,d=64", {"batch (b) = -1"}},
    {"explain --op attention --shape b=1,h=8,s=128,d=64 --config fa2.bm128.bn64.w8",
     {"not an attention config key"}},
    {"explain --op attention --shape b=1,h=8,s=128,d=64 --config fa2.bm128.bn64.w8.s0",
     {"'s' = 0 is out of range"}},
    {"explain --op attention --shape b=1,h=8,s=128,d=64 --dtype fp32", {"bf16 or fp16"}},
};

INSTANTIATE_TEST_SUITE_P(Table, CliBadInput, ::testing::ValuesIn(kCases));

}  // namespace
