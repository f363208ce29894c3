// Instantiation stubs and NVRTC options for each op.
#include "generator/generated_source.hpp"

#include <fmt/format.h>

#include "core/op_registry.hpp"
#include "core/sha256.hpp"
#include "generator/embedded_templates.hpp"

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

}  // namespace

GeneratedSource generate(const KernelSource& kernels, const std::string& arch) {
  GeneratedSource s;
  s.name = kernels.name;
  // NOTE: the code names only the headers and (through the name expressions) the template
  // arguments, never the config key: configs that differ in run-time parameters (GEMM's raster
  // group) share one compile key and one cubin.
  s.code = "// kerntune generated: kernel instantiation\n";
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

const std::string& embedded_templates_sha256() {
  // The embedded templates never change within a process: their digest is taken once.
  static const std::string digest = [] {
    Sha256 h;
    for (const auto& file : embedded_templates()) {
      h.update_field(file.name);
      h.update_field(file.contents);
    }
    return h.hex_digest();
  }();
  return digest;
}

std::string source_key(const GeneratedSource& source) {
  Sha256 h;
  h.update_field(fmt::format("kerntune-source-{}", kCodegenVersion));
  h.update_field(source.arch);
  h.update_field(source.code);
  for (const auto& expr : source.name_expressions) h.update_field(expr);
  for (const auto& option : source.options) h.update_field(option);
  h.update_field(embedded_templates_sha256());
  return h.hex_digest();
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

}  // namespace kt::gen
