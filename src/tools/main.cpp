// kerntune CLI entry point: builds the command tree, configures logging, and turns every error
// into one clear line and a non-zero exit.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/env.hpp"
#include "core/error.hpp"
#include "kerntune/kerntune.h"
#include "tools/commands.hpp"

namespace {

// Exit status (the footer documents it): the command's work failed (a kt::Error or another
// exception, its message on stderr), or the command line did not parse.
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

void configure_logging(bool verbose) {
  auto logger = spdlog::stderr_color_mt("kerntune");
  logger->set_pattern("[%H:%M:%S] [%^%l%$] %v");
  spdlog::level::level_enum level = verbose ? spdlog::level::debug : spdlog::level::info;
  if (auto name = kt::env::log_level()) level = spdlog::level::from_str(*name);
  logger->set_level(level);
}

constexpr const char* kFooter = R"(Examples:
  kerntune ops                                      the ops --op takes, with their shape syntax
  kerntune info                                     what GPU, toolkit and database are here
  kerntune tune --op gemm --shape 4096x4096x4096    tune one shape (predicts without a GPU)
  kerntune tune --suite foundation                  tune a list of shapes
  kerntune tune --op rmsnorm --shape rows=8192,hidden=4096 --residual
  kerntune bench --shape 4096x4096x4096             tuned kernel vs cuBLASLt, same process
  kerntune explain --shape 4100x4096x4096           waves, tile efficiency, predicted time
  kerntune compile --shape 4096x4096x4096 --arch sm_80   NVRTC only: registers and spills
  kerntune cache ls                                 what the database holds
  kerntune report --out report.html                 the database's results, plotted, one page
  kerntune doctor                                   check database, toolkit, driver; what to fix
  kerntune fleet run --manifest m.txt --shard 2/4   one shard of a fleet's tuning (see fleet --help)
Run 'kerntune SUBCOMMAND --help' for the options of each.
Exit status: 0 done; 1 the command failed (the line on stderr says why and what to do);
2 the command line is wrong (unknown option or subcommand, missing or malformed argument).)";

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout and stderr lines in order
  CLI::App app{
      "kerntune: finds the fastest configuration of a GPU kernel for each shape and GPU, "
      "remembers it in a SQLite database, and serves it."};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("kerntune {}", kt_version()),
                       "Print the version and exit");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Debug logging (or set KERNTUNE_LOG_LEVEL)");
  app.parse_complete_callback([&verbose] { configure_logging(verbose); });
  kt::cli::register_ops(app);
  kt::cli::register_info(app);
  kt::cli::register_gen(app);
  kt::cli::register_compile(app);
  kt::cli::register_explain(app);
  kt::cli::register_tune(app);
  kt::cli::register_bench(app);
  kt::cli::register_cache(app);
  kt::cli::register_fleet(app);
  kt::cli::register_report(app);
  kt::cli::register_doctor(app);
  kt::cli::register_trace(app);
  kt::cli::register_completion(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError&) {
    return kExitFailure;  // a command that printed its own failure (doctor's FAIL lines)
  } catch (const CLI::ParseError& e) {
    // --help and --version end the parse with status 0; anything else is a usage error.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  } catch (const kt::Error& e) {
    fmt::print(stderr, "kerntune: {}: {}\n", kt::to_string(e.kind()), e.what());
    return kExitFailure;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kerntune: unexpected error: {}\n", e.what());
    return kExitFailure;
  }
  return 0;
}
