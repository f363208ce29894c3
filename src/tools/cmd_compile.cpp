// `kerntune compile`: NVRTC only (no GPU needed): compiles configs for an arch and prints each
// kernel's registers, spills, shared memory, compile time and ptxas performance warnings.
#include <fmt/format.h>

#include <future>

#include "core/attention_config.hpp"
#include "core/error.hpp"
#include "core/gemm_model.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace kt::cli {

namespace {

struct CompileOptions {
  ProblemOptions problem;
  std::vector<std::string> configs;
  std::string profile = "h200";
  std::string arch;
  int top = 8;
  bool ptx = false;
};

// One row of the resource table, or the compile error.
std::string compile_row(const std::string& config_key, const gen::GeneratedSource& s, int smem,
                        bool ptx) {
  try {
    if (ptx) return gen::compile_to_ptx(s);
    const gen::CompiledKernel k = gen::compile(s);
    const auto r = k.resources(0);
    const std::string notes = fmt::format("{}", fmt::join(k.report.performance_warnings, "; "));
    return fmt::format("{:<44} {:>5} {:>7} {:>9} {:>8.0f}  {}", config_key, r.registers,
                       k.report.total_spill_bytes(), smem, k.compile_ms, notes);
  } catch (const CompileError& e) {
    return fmt::format("{:<44} COMPILE ERROR\n{}", config_key, e.log());
  }
}

int print_rows(std::vector<std::future<std::string>>& rows) {
  int failures = 0;
  for (auto& r : rows) {
    const std::string line = r.get();
    if (line.find("COMPILE ERROR") != std::string::npos ||
        line.find("invalid:") != std::string::npos)
      ++failures;
    fmt::print("{}\n", line);
  }
  return failures;
}

int compile_attention(const CompileOptions& o, const DeviceDesc& device, const std::string& arch) {
  int failures = 0;
  for (const AttentionProblem& p : o.problem.attention_problems()) {
    std::vector<AttentionConfig> configs;
    for (const auto& key : o.configs) configs.push_back(parse_attention_config_key(key));
    if (configs.empty())
      for (const auto& r : rank_by_model(p, enumerate_attention_configs(p, device), device))
        if (int(configs.size()) < o.top) configs.push_back(r.config);
    fmt::print("{} for {} ({} configs)\n", to_key(p), arch, configs.size());
    fmt::print("{:<44} {:>5} {:>7} {:>9} {:>8}  {}\n", "config", "regs", "spills", "smem_B", "ms",
               "notes");
    std::vector<std::future<std::string>> rows;
    for (const auto& c : configs)
      rows.push_back(std::async(std::launch::async, [&, c] {
        if (auto why = validate(p, c, device))
          return fmt::format("{:<44} invalid: {}", to_key(c), *why);
        return compile_row(to_key(c), gen::generate_attention(p, c, false, arch), smem_bytes(p, c),
                           o.ptx);
      }));
    failures += print_rows(rows);
  }
  return failures;
}

void run(const CompileOptions& o) {
  const DeviceDesc& device = device_profile(o.profile);
  const std::string arch = o.arch.empty() ? device.arch() : o.arch;
  int failures = 0;
  if (o.problem.is_attention()) failures = compile_attention(o, device, arch);
  for (const GemmProblem& p :
       o.problem.is_attention() ? std::vector<GemmProblem>{} : o.problem.gemm_problems()) {
    std::vector<GemmConfig> configs;
    for (const auto& key : o.configs) configs.push_back(parse_gemm_config_key(key));
    if (configs.empty()) {
      for (const auto& r : rank_by_model(p, enumerate_gemm_configs(p, device), device)) {
        configs.push_back(r.config);
        if (int(configs.size()) >= o.top) break;
      }
    }
    fmt::print("{} for {} ({} configs)\n", to_key(p), arch, configs.size());
    fmt::print("{:<44} {:>5} {:>7} {:>9} {:>8}  {}\n", "config", "regs", "spills", "smem_B", "ms",
               "notes");
    std::vector<std::future<std::string>> rows;
    for (const auto& c : configs) {
      rows.push_back(std::async(std::launch::async, [&, c] {
        if (auto why = validate(p, c, device))
          return fmt::format("{:<44} invalid: {}", to_key(c), *why);
        return compile_row(to_key(c), gen::generate_gemm(p, c, arch), smem_bytes(p, c), o.ptx);
      }));
    }
    failures += print_rows(rows);
  }
  if (failures > 0)
    throw Error(ErrorKind::kCompile, fmt::format("{} config(s) did not compile", failures));
}

}  // namespace

void register_compile(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compile configs with NVRTC (no GPU needed) and print registers and spills");
  add_problem_options(*cmd, o->problem);
  cmd->add_option("--config", o->configs,
                  "Config key (repeatable; default: the model's top --top)");
  cmd->add_option("--top", o->top, "How many of the model's best configs to compile")
      ->capture_default_str();
  add_profile_option(*cmd, o->profile);
  cmd->add_option("--arch", o->arch, "Target arch: sm_90a, sm_80, ... (default: the profile's)");
  cmd->add_flag("--ptx", o->ptx, "Print the PTX instead of the resource table");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
