// NVRTC compilation with the embedded templates as in-memory headers.
#include "generator/nvrtc_compiler.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/sha256.hpp"
#include "generator/embedded_templates.hpp"
#include "generator/nvrtc_library.hpp"

namespace kt::gen {

namespace {

// An nvrtcProgram with the embedded headers, destroyed on scope exit.
class Program {
 public:
  explicit Program(const GeneratedSource& source) : lib_(nvrtc()) {
    std::vector<std::string> names, contents;
    for (const auto& file : embedded_templates()) {
      names.emplace_back(file.name);
      contents.emplace_back(file.contents);
    }
    std::vector<const char*> name_ptrs, content_ptrs;
    for (std::size_t i = 0; i < names.size(); ++i) {
      name_ptrs.push_back(names[i].c_str());
      content_ptrs.push_back(contents[i].c_str());
    }
    check(lib_.create_program(&program_, source.code.c_str(), source.name.c_str(),
                              int(names.size()), content_ptrs.data(), name_ptrs.data()),
          "nvrtcCreateProgram");
    for (const auto& expr : source.name_expressions)
      check(lib_.add_name_expression(program_, expr.c_str()), "nvrtcAddNameExpression");
  }
  ~Program() { lib_.destroy_program(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Returns the log; throws CompileError when compilation fails.
  std::string compile(const GeneratedSource& source) {
    std::vector<const char*> options;
    for (const auto& o : source.options) options.push_back(o.c_str());
    const nvrtcResult result = lib_.compile_program(program_, int(options.size()), options.data());
    std::size_t log_size = 0;
    lib_.get_log_size(program_, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) lib_.get_log(program_, log.data());
    while (!log.empty() && log.back() == '\0') log.pop_back();
    if (result != NVRTC_SUCCESS) {
      throw CompileError(source.name, fmt::format("{}\n{}", lib_.get_error_string(result), log),
                         source.options);
    }
    return log;
  }

  nvrtcProgram get() const { return program_; }
  const NvrtcLibrary& lib() const { return lib_; }

  void check(nvrtcResult result, const char* call) const {
    if (result != NVRTC_SUCCESS)
      throw Error(ErrorKind::kCompile,
                  fmt::format("{} failed: {}", call, lib_.get_error_string(result)));
  }

 private:
  const NvrtcLibrary& lib_;
  nvrtcProgram program_ = nullptr;
};

}  // namespace

KernelResources CompiledKernel::resources(std::size_t index) const {
  if (index < lowered_names.size())
    if (const KernelResources* r = report.find(lowered_names[index])) return *r;
  return {};
}

std::string compile_key(const GeneratedSource& source) {
  Sha256 h;
  h.update_field(fmt::format("kerntune-codegen-{}", kCodegenVersion));
  h.update_field(nvrtc().version_string);
  h.update_field(source.arch);
  h.update_field(source.code);
  for (const auto& expr : source.name_expressions) h.update_field(expr);
  for (const auto& option : source.options) h.update_field(option);
  for (const auto& file : embedded_templates()) {
    h.update_field(file.name);
    h.update_field(file.contents);
  }
  return h.hex_digest();
}

CompiledKernel compile(const GeneratedSource& source) {
  const auto start = std::chrono::steady_clock::now();
  Program program(source);
  CompiledKernel out;
  out.log = program.compile(source);
  out.compile_key = compile_key(source);
  out.source_key = source_key(source);
  out.arch = source.arch;
  out.source_name = source.name;
  out.name_expressions = source.name_expressions;
  out.nvrtc_version = program.lib().version_string;
  for (const auto& expr : source.name_expressions) {
    const char* lowered = nullptr;
    program.check(program.lib().get_lowered_name(program.get(), expr.c_str(), &lowered),
                  "nvrtcGetLoweredName");
    out.lowered_names.emplace_back(lowered);
  }
  std::size_t size = 0;
  program.check(program.lib().get_cubin_size(program.get(), &size), "nvrtcGetCUBINSize");
  if (size == 0)
    throw Error(ErrorKind::kCompile,
                fmt::format("NVRTC produced no cubin for {} (arch {}): a virtual compute_ arch "
                            "yields PTX only; use sm_XX",
                            source.name, source.arch));
  out.cubin.resize(size);
  program.check(program.lib().get_cubin(program.get(), out.cubin.data()), "nvrtcGetCUBIN");
  out.report = parse_ptxas_report(out.log);
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (out.resources(0).registers == 0)
    logger().warn("ptxas reported no resources for {} ({}): registers and spills are unknown",
                  source.name, out.lowered_names.empty() ? "?" : out.lowered_names[0]);
  for (const auto& warning : out.report.performance_warnings)
    logger().warn("ptxas performance warning in {}: {}", source.name, warning);
  logger().debug("compiled {} arch={} ms={:.0f} regs={} spills={}", source.name, source.arch,
                 out.compile_ms, out.resources().registers, out.report.total_spill_bytes());
  return out;
}

std::string compile_to_ptx(const GeneratedSource& source) {
  Program program(source);
  program.compile(source);
  std::size_t size = 0;
  program.check(program.lib().get_ptx_size(program.get(), &size), "nvrtcGetPTXSize");
  std::string ptx(size, '\0');
  program.check(program.lib().get_ptx(program.get(), ptx.data()), "nvrtcGetPTX");
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace kt::gen
