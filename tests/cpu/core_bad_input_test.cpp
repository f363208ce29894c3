// Every parser of user text refuses bad input with a kt::Error (invalid argument) that names
// what is wrong: zero, negative and out-of-range sizes, int64 and element-count overflow,
// missing, duplicate and unknown fields, garbage, trailing junk, non-canonical keys.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/attention_config.hpp"
#include "core/attention_problem.hpp"
#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/types.hpp"

namespace kt {
namespace {

struct BadInput {
  const char* parser;
  const char* text;
  const char* needle;  // the error message must contain it
};

void parse(const std::string& parser, const std::string& text) {
  if (parser == "gemm_shape") {
    GemmProblem p;
    parse_gemm_shape(text, p);
  } else if (parser == "gemm_key") {
    parse_gemm_key(text);
  } else if (parser == "attention_shape") {
    AttentionProblem p;
    parse_attention_shape(text, p);
  } else if (parser == "attention_key") {
    parse_attention_key(text);
  } else if (parser == "gemm_config") {
    parse_gemm_config_key(text);
  } else if (parser == "attention_config") {
    parse_attention_config_key(text);
  } else if (parser == "dtype") {
    parse_dtype(text);
  } else if (parser == "layout") {
    parse_layout(text);
  } else {
    FAIL() << "unknown parser " << parser;
  }
}

class BadInputs : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputs, AreRefusedNamingTheProblem) {
  const BadInput& c = GetParam();
  try {
    parse(c.parser, c.text);
    FAIL() << c.parser << " accepted '" << c.text << "'";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument) << error.what();
    EXPECT_NE(std::string(error.what()).find(c.needle), std::string::npos)
        << "'" << c.needle << "' not in: " << error.what();
  }
}

const BadInput kBadInputs[] = {
    {"gemm_shape", "0x64x64", "M = 0"},
    {"gemm_shape", "64x-3x64", "N = -3"},
    {"gemm_shape", "64x64", "MxNxK"},
    {"gemm_shape", "64x64x64x64", "MxNxK"},
    {"gemm_shape", "", "MxNxK"},
    {"gemm_shape", "64xx64", "N in '64xx64' is empty"},
    {"gemm_shape", "64x64x64junk", "not an integer"},
    {"gemm_shape", " 64x64x64", "not an integer"},
    {"gemm_shape", "+64x64x64", "not an integer"},
    {"gemm_shape", "0x40x64x64", "MxNxK"},
    {"gemm_shape", "99999999999999999999x1x1", "out of range"},
    {"gemm_shape", "3000000000x1x1", "exceeds 2^31-1"},
    {"gemm_shape", "100000x100000x8", "C (MxN) has 100000x100000 elements"},
    {"gemm_shape", "8x100000x100000", "B has 100000x100000 elements"},
    {"gemm_key", "gemm:bf16:bf16:nt:064x64x64", "not canonical"},
    {"gemm_key", "gemm:bf16:bf16:tn:64x64x64", "tn"},
    {"gemm_key", "gemm:int8:bf16:nt:64x64x64", "int8"},
    {"gemm_key", "gemm:fp32:fp32:nt:64x64x64", "inputs must be bf16 or fp16"},
    {"gemm_key", "gemm:bf16:bf16:nt", "not a GEMM problem key"},
    {"gemm_key", "conv:bf16:bf16:nt:64x64x64", "not a GEMM problem key"},
    {"attention_shape", "b=1,h=8,s=128", "lacks the head dimension d"},
    {"attention_shape", "h=8,s=128,d=64", "lacks the batch b"},
    {"attention_shape", "b=1,s=128,d=64", "lacks the head count"},
    {"attention_shape", "b=1,h=8,d=64", "lacks the query length"},
    {"attention_shape", "b=1,b=2,h=8,s=128,d=64", "sets 'b' twice"},
    {"attention_shape", "b=1,h=8,hq=8,s=128,d=64", "sets 'hq' twice"},
    {"attention_shape", "b=1,h=8,s=128,sk=64,d=64", "sets 'sk' twice"},
    {"attention_shape", "b=1,h=8,s=128,d=64,", "is not NAME=VALUE"},
    {"attention_shape", "b=1,h=8,s=128,d=64,x=1", "unknown attention shape field 'x'"},
    {"attention_shape", "b=1,h=8,s=12x,d=64", "not an integer"},
    {"attention_shape", "b=1,h=8,s=,d=64", "is empty"},
    {"attention_shape", "b=1,h=8,s=99999999999999999999,d=64", "out of range"},
    {"attention_shape", "b=1,h=8,s=-4,d=64", "seqlen_q (sq) = -4"},
    {"attention_shape", "b=0,h=8,s=4,d=64", "batch (b) = 0"},
    {"attention_shape", "b=1,h=8,s=4,d=80", "head_dim = 80"},
    {"attention_shape", "b=1,hq=6,hkv=4,s=4,d=64", "not a multiple"},
    {"attention_shape", "b=1,h=8,s=4294967296,d=64", "exceeds 2^31-1"},
    {"attention_shape", "", "is not NAME=VALUE"},
    {"attention_key", "attn:bf16:b1.hq8.hkv8.sq4.sk4.d64", "expected attn"},
    {"attention_key", "attn:bf16:b1.hq8.hkv8.sq4.sk4.d64.maybe", "'causal' or 'full'"},
    {"attention_key", "attn:bf16:b01.hq8.hkv8.sq4.sk4.d64.full", "not canonical"},
    {"attention_key", "attn:bf16:b1.hq8.hkv8.sq4.sk4.x64.full", "should start with 'd'"},
    {"gemm_config", "sm80.bm128", "not a GEMM config key"},
    {"gemm_config", "sm90.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1", "not a GEMM config key"},
    {"gemm_config", "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1.x", "not a GEMM config key"},
    {"gemm_config", "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.k1", "should start with 'sk'"},
    {"gemm_config", "sm80.bm0128.bn128.bk32.wm64.wn64.s4.g8.sk1", "not canonical"},
    {"gemm_config", "sm80.bm128.bn128.bk32.wm64.wn64.s0.g8.sk1", "out of range"},
    {"gemm_config", "sm80.bm128.bn128.bk32.wm64.wn64.s99999999999.g8.sk1", "out of range"},
    {"gemm_config", "sm80.bm128.bn128.bk32.wm64.wn64.s-4.g8.sk1", "out of range"},
    {"attention_config", "fa2.bm128.bn64.w8", "not an attention config key"},
    {"attention_config", "fa2.bm128.bn64.w8.s", "is empty"},
    {"attention_config", "fa2.bm128.bn64.w8.s2x", "not an integer"},
    {"attention_config", "fa2.bm128.bn64.w8.s0", "out of range"},
    {"attention_config", "fa2.bm128.bn64.w8.s+2", "not an integer"},
    {"dtype", "int8", "bf16"},
    {"dtype", "", "bf16"},
    {"layout", "tn", "nt"},
};

INSTANTIATE_TEST_SUITE_P(Parsers, BadInputs, ::testing::ValuesIn(kBadInputs));

}  // namespace
}  // namespace kt
