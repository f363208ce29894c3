// `kerntune compile`: NVRTC only (no GPU needed): compiles configs for an arch and prints each
// kernel's registers, spills, shared memory, compile time and ptxas performance warnings.
#include <fmt/format.h>

#include <future>

#include "core/error.hpp"
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
  bool profile_given = false;  // --device-profile on the command line
  int top = 8;
  bool ptx = false;
};

// One row of the resource table, or the compile error.
std::string compile_row(const std::string& config_key, const gen::GeneratedSource& s, bool ptx) {
  try {
    if (ptx) return gen::compile_to_ptx(s);
    const gen::CompiledKernel k = gen::compile(s);
    const auto r = k.resources(0);
    const std::string notes = fmt::format("{}", fmt::join(k.report.performance_warnings, "; "));
    return fmt::format("{:<44} {:>5} {:>7} {:>9} {:>8.0f}  {}", config_key, r.registers,
                       k.report.total_spill_bytes(), r.smem_static_bytes, k.compile_ms, notes);
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

void run(const CompileOptions& o) {
  const std::string profile = profile_for_arch(o.profile, o.profile_given, o.arch);
  const DeviceDesc& device = device_profile(profile);
  const std::string arch = o.arch.empty() ? device.arch() : o.arch;
  if (profile != o.profile)
    fmt::print("configs chosen for device profile {} ({}): --arch {} is not {}'s {}\n", profile,
               arch, arch, o.profile, device_profile(o.profile).arch());
  const OpSpec& op = o.problem.spec();
  int failures = 0;
  for (const std::string& p : o.problem.problem_keys()) {
    std::vector<std::string> configs = o.configs;
    if (configs.empty())
      for (const RankedConfigKey& r : op.ranked_configs(p, device))
        if (int(configs.size()) < o.top) configs.push_back(r.config_key);
    fmt::print("{} for {} ({} configs)\n", p, arch, configs.size());
    fmt::print("{:<44} {:>5} {:>7} {:>9} {:>8}  {}\n", "config", "regs", "spills", "static_B", "ms",
               "notes");
    std::vector<std::future<std::string>> rows;
    for (const std::string& c : configs)
      rows.push_back(std::async(std::launch::async, [&, c] {
        if (auto why = op.validate_config(p, c, device))
          return fmt::format("{:<44} invalid: {}", c, *why);
        return compile_row(c, gen::generate(op, p, c, "", arch), o.ptx);
      }));
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
  CLI::Option* profile = add_profile_option(*cmd, o->profile);
  cmd->add_option("--arch", o->arch,
                  "Target arch: sm_90a, sm_80, ... (default: the profile's; without "
                  "--device-profile, configs are chosen for the built-in profile of that arch)");
  cmd->add_flag("--ptx", o->ptx, "Print the PTX instead of the resource table");
  cmd->callback([o, profile] {
    o->profile_given = profile->count() > 0;
    run(*o);
  });
}

}  // namespace kt::cli
