// `kerntune ops`: the registered ops, each with its --shape syntax, flags, families, suites and
// template version: what --op accepts.
#include <fmt/format.h>

#include "core/op_registry.hpp"
#include "tools/commands.hpp"

namespace kt::cli {

namespace {

void run() {
  for (const OpEntry& entry : OpRegistry::instance().all()) {
    const OpSpec& op = *entry.spec;
    fmt::print("{}\n  {}\n", op.name(), op.description());
    fmt::print("  --shape     {}\n", op.shape_syntax());
    for (const OpFlag& flag : op.flags()) fmt::print("  --{:<9} {}\n", flag.name, flag.help);
    fmt::print("  families    {}\n", fmt::join(op.families(), ", "));
    std::vector<std::string> suites;
    for (const auto& [name, shapes] : op.suites())
      suites.push_back(fmt::format("{} ({})", name, shapes.size()));
    if (!suites.empty()) fmt::print("  suites      {}\n", fmt::join(suites, ", "));
    fmt::print("  keys        {}...  (template version {})\n", op.key_prefix(),
               op.template_version());
  }
}

}  // namespace

void register_ops(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "ops", "List the ops --op accepts, with their shape syntax, flags, families and suites");
  cmd->callback([] { run(); });
}

}  // namespace kt::cli
