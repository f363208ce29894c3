// One registration function per subcommand (each in its own cmd_*.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace kt::cli {

void register_info(CLI::App& app);
void register_gen(CLI::App& app);
void register_compile(CLI::App& app);
void register_explain(CLI::App& app);
void register_tune(CLI::App& app);
void register_bench(CLI::App& app);
void register_cache(CLI::App& app);
void register_doctor(CLI::App& app);
void register_trace(CLI::App& app);
void register_ops(CLI::App& app);
void register_completion(CLI::App& app);
void register_fleet(CLI::App& app);
void register_report(CLI::App& app);

}  // namespace kt::cli
