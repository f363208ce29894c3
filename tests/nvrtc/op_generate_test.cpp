// One source per kernel: the typed generators the tests and benches use and the registry's
// generate() the runtime and the tuner use give the same code, so the same compile key (a stored
// cubin found by one is found by the other).
#include <gtest/gtest.h>

#include "core/attention_config.hpp"
#include "core/gemm_config.hpp"
#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "ops/attention/attention_source.hpp"
#include "ops/gemm/gemm_source.hpp"

namespace kt {
namespace {

TEST(OpGenerate, TypedGeneratorsAndTheRegistryShareCompileKeys) {
  GemmProblem g;
  parse_gemm_shape("768x512x256", g);
  const GemmConfig gc = parse_gemm_config_key("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk2");
  EXPECT_EQ(gen::compile_key(gen::generate_gemm(g, gc, "sm_80")),
            gen::compile_key(gen::generate(op_spec("gemm"), to_key(g), to_key(gc), "", "sm_80")));
  AttentionProblem a;
  parse_attention_shape("b=1,h=2,s=256,d=64", a);
  const AttentionConfig ac = parse_attention_config_key("fa2.bm128.bn64.w8.s2");
  EXPECT_EQ(
      gen::compile_key(gen::generate_attention(a, ac, true, "sm_80")),
      gen::compile_key(gen::generate(op_spec("attention"), to_key(a), to_key(ac), "lse", "sm_80")));
  EXPECT_NE(gen::compile_key(gen::generate_attention(a, ac, false, "sm_80")),
            gen::compile_key(gen::generate_attention(a, ac, true, "sm_80")));
}

TEST(OpGenerate, ConfigsDifferingInRunTimeParametersShareACubin) {
  const std::string problem = "gemm:bf16:bf16:nt:768x512x256";
  const OpSpec& gemm = op_spec("gemm");
  EXPECT_EQ(gen::compile_key(gen::generate(
                gemm, problem, "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1", "", "sm_80")),
            gen::compile_key(gen::generate(
                gemm, problem, "sm80.bm128.bn128.bk32.wm64.wn64.s4.g1.sk1", "", "sm_80")));
}

}  // namespace
}  // namespace kt
