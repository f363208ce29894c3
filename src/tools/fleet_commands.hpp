// The `kerntune fleet` subcommands, one file each (cmd_fleet*.cpp), registered under the group
// `register_fleet` makes (commands.hpp).
#pragma once

#include <CLI/CLI.hpp>

namespace kt::cli {

void register_fleet_run(CLI::App& fleet);
void register_fleet_status(CLI::App& fleet);
void register_fleet_merge(CLI::App& fleet);
void register_fleet_verify(CLI::App& fleet);
void register_fleet_diff(CLI::App& fleet);

}  // namespace kt::cli
