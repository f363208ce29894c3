// Instantiation stubs and NVRTC options for each op.
#include "generator/generated_source.hpp"

#include <fmt/format.h>

namespace kt::gen {

namespace {

std::vector<std::string> nvrtc_options(const std::string& arch) {
  // NOTE: the templates include no CUDA headers (conversions are inline PTX), so no -I is
  // needed and the toolkit's header version cannot skew against libnvrtc.
  // NOTE: --no-cache: NVRTC 13's own cache returned cubins without the ptxas report on the
  // H200 host, so registers and spills read as 0 and a spilling kernel looked clean.
  return {"--std=c++17", "--gpu-architecture=" + arch, "--ptxas-options=-v", "--no-cache",
          fmt::format("-DKT_CODEGEN_VERSION={}", kCodegenVersion)};
}

std::string_view device_type(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return "kt::bf16";
    case DType::kFP16:
      return "kt::fp16";
    case DType::kFP32:
      return "float";
  }
  return "?";
}

}  // namespace

GeneratedSource generate(const KernelSource& kernels, const std::string& arch) {
  GeneratedSource s;
  s.name = kernels.name;
  s.code = fmt::format("// kerntune generated: {}\n", kernels.name);
  for (const std::string& header : kernels.headers)
    s.code += fmt::format("#include \"{}\"\n", header);
  s.name_expressions = kernels.name_expressions;
  s.arch = arch;
  s.options = nvrtc_options(arch);
  return s;
}

GeneratedSource generate(const OpSpec& op, std::string_view problem_key,
                         std::string_view config_key, std::string_view variant,
                         const std::string& arch) {
  return generate(op.kernel_source(problem_key, config_key, variant), arch);
}

GeneratedSource generate_gemm(const GemmProblem& problem, const GemmConfig& config,
                              const std::string& arch) {
  GeneratedSource s;
  s.name = fmt::format("{}.{}.{}", to_key(config), to_string(problem.in_dtype),
                       to_string(problem.out_dtype));
  // NOTE: the code names only what the template arguments fix, so configs that differ in
  // runtime parameters (raster_group) share one compile key and one cubin.
  s.code = config.family == GemmFamily::kSm90 ? "// kerntune generated: GEMM instantiation\n"
                                                "#include \"kerntune/gemm/gemm_sm90.cuh\"\n"
                                              : "// kerntune generated: GEMM instantiation\n"
                                                "#include \"kerntune/gemm/gemm_sm80.cuh\"\n";
  if (config.family == GemmFamily::kSmallM)
    s.code =
        "// kerntune generated: GEMM instantiation\n"
        "#include \"kerntune/gemm/gemm_small_m.cuh\"\n";
  s.name_expressions.push_back(gemm_kernel_expression(problem, config));
  // sm90 split-K reduces inside the main kernel; the other families add the reduce kernel.
  if (config.split_k > 1 && config.family != GemmFamily::kSm90)
    s.name_expressions.push_back(gemm_reduce_expression(problem));
  s.arch = arch;
  s.options = nvrtc_options(arch);
  return s;
}

GeneratedSource generate_gemm_check(const GemmProblem& problem, const std::string& arch) {
  GeneratedSource s;
  const auto in = device_type(problem.in_dtype), out = device_type(problem.out_dtype);
  const bool nt = problem.layout == Layout::kNT;
  s.name = fmt::format("gemm_check.{}.{}.{}", to_string(problem.in_dtype),
                       to_string(problem.out_dtype), to_string(problem.layout));
  s.code =
      "// kerntune generated: GEMM verification kernels\n"
      "#include \"kerntune/gemm/gemm_check.cuh\"\n";
  s.name_expressions = {
      fmt::format("kt::fill_random<{}>", in),
      fmt::format("kt::fill_poison<{}>", out),
      fmt::format("kt::gemm_reference_samples<{}, {}>", in, nt ? "true" : "false"),
      fmt::format("kt::gather_and_count_nonfinite<{}>", out),
  };
  s.arch = arch;
  s.options = nvrtc_options(arch);
  return s;
}

GeneratedSource generate_l2_flush(const std::string& arch) {
  GeneratedSource s;
  s.name = "l2_flush";
  s.code =
      "// kerntune generated: the benchmark's L2 flush\n"
      "#include \"kerntune/common/l2_flush.cuh\"\n";
  s.name_expressions = {"kt::l2_flush_read"};
  s.arch = arch;
  s.options = nvrtc_options(arch);
  return s;
}

GeneratedSource generate_attention(const AttentionProblem& problem, const AttentionConfig& config,
                                   bool write_lse, const std::string& arch) {
  GeneratedSource s;
  s.name = fmt::format("{}.d{}.{}.{}{}", to_key(config), problem.head_dim, to_string(problem.dtype),
                       problem.causal ? "causal" : "full", write_lse ? ".lse" : "");
  s.code = config.family == AttentionFamily::kSm90
               ? "// kerntune generated: attention forward instantiation\n"
                 "#include \"kerntune/attention/attention_fwd_sm90.cuh\"\n"
               : "// kerntune generated: attention forward instantiation\n"
                 "#include \"kerntune/attention/attention_fwd_sm80.cuh\"\n";
  s.name_expressions.push_back(attention_kernel_expression(problem, config, write_lse));
  s.arch = arch;
  s.options = nvrtc_options(arch);
  return s;
}

GeneratedSource generate_attention_check(const AttentionProblem& problem, const std::string& arch) {
  GeneratedSource s;
  const auto type = device_type(problem.dtype);
  s.name = fmt::format("attention_check.{}", to_string(problem.dtype));
  s.code =
      "// kerntune generated: attention verification kernels\n"
      "#include \"kerntune/attention/attention_check.cuh\"\n";
  s.name_expressions = {
      fmt::format("kt::fill_random<{}>", type),
      fmt::format("kt::fill_poison<{}>", type),
      fmt::format("kt::attention_reference_rows<{}>", type),
      fmt::format("kt::gather_rows<{}>", type),
  };
  s.arch = arch;
  s.options = nvrtc_options(arch);
  return s;
}

}  // namespace kt::gen
