// `kerntune gen`: prints the generated source of a (problem, config), with its kernels and
// NVRTC options; --templates also prints the embedded template headers it includes.
#include <fmt/format.h>

#include "core/error.hpp"
#include "generator/embedded_templates.hpp"
#include "generator/generated_source.hpp"
#include "runtime/op_dispatch.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace kt::cli {

namespace {

struct GenOptions {
  ProblemOptions problem;
  std::string config;
  std::string profile = "h200";
  std::string arch;
  bool profile_given = false;  // --device-profile on the command line
  bool templates = false;
};

void print_source(const gen::GeneratedSource& s, const std::string& problem_key,
                  const std::string& config_key, bool model_pick, const GenOptions& o,
                  const std::string& profile, const std::string& arch) {
  fmt::print("// problem: {}\n// config:  {}{}\n// arch:    {}\n", problem_key, config_key,
             model_pick ? fmt::format(" (the model's pick for {})", profile) : "", arch);
  for (const auto& e : s.name_expressions) fmt::print("// kernel:  {}\n", e);
  fmt::print("// nvrtc:   {}\n{}", fmt::join(s.options, " "), s.code);
  if (o.templates)
    for (const auto& f : gen::embedded_templates())
      fmt::print("\n// ===== embedded header {} =====\n{}", f.name, f.contents);
}

void run(const GenOptions& o) {
  const std::string profile = profile_for_arch(o.profile, o.profile_given, o.arch);
  const DeviceDesc& device = device_profile(profile);
  const std::string arch = o.arch.empty() ? device.arch() : o.arch;
  const OpSpec& op = o.problem.spec();
  for (const std::string& p : o.problem.problem_keys()) {
    const std::string c =
        o.config.empty() ? rt::model_ranked_configs(op, p, device, 64 << 20, 1).front() : o.config;
    if (auto why = op.validate_config(p, c, device))
      throw_invalid(fmt::format("config {} cannot run {} on {}: {}", c, p, device.name, *why));
    print_source(gen::generate(op, p, c, "", arch), p, c, o.config.empty(), o, profile, arch);
  }
}

}  // namespace

void register_gen(CLI::App& app) {
  auto o = std::make_shared<GenOptions>();
  CLI::App* cmd =
      app.add_subcommand("gen", "Print the generated kernel source for a shape and config");
  add_problem_options(*cmd, o->problem);
  cmd->add_option("--config", o->config,
                  "Config key, e.g. sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1 (default: the "
                  "model's pick)");
  CLI::Option* profile = add_profile_option(*cmd, o->profile);
  cmd->add_option("--arch", o->arch,
                  "Target arch (default: the profile's, e.g. sm_90a; without --device-profile, "
                  "the config is chosen for the built-in profile of that arch)");
  cmd->add_flag("--templates", o->templates, "Also print the embedded template headers");
  cmd->callback([o, profile] {
    o->profile_given = profile->count() > 0;
    run(*o);
  });
}

}  // namespace kt::cli
