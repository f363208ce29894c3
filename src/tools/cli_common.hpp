// Options shared by the subcommands (problem, database, device) and the terminal helpers.
// tools/ parses and prints; everything it does is a call into the library.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_spec.hpp"
#include "tuner/progress.hpp"

namespace kt::cli {

struct ProblemOptions {
  std::string op = "gemm";
  std::vector<std::string> shapes;
  std::string suite;
  std::string dtype = "bf16";
  std::string out_dtype;           // empty: same as dtype
  std::string layout;              // empty: the op's default
  std::vector<std::string> flags;  // the op flags given (every registered op's flags are options)
  bool shape_required = true;

  // The op named by --op; throws kt::Error listing the registered ops.
  const OpSpec& spec() const;
  // The problem keys these options name (every --shape, then the suite's). Throws kt::Error
  // naming the bad value (an unknown op, a malformed shape field, a flag foreign to the op).
  std::vector<std::string> problem_keys() const;
};

void add_problem_options(CLI::App& cmd, ProblemOptions& options);
void add_database_option(CLI::App& cmd, std::string& path);
// Returns the option, so that a command can tell a given profile from the default.
CLI::Option* add_profile_option(CLI::App& cmd, std::string& profile);

// The device profile whose configs `compile` and `gen` choose and validate for `arch`: `profile`
// when `arch` is empty or its own; else, when the profile was not given (the default), the
// first built-in profile of that arch (a100 for sm_80). Throws kt::Error (kInvalidArgument)
// naming both archs and the fix otherwise: configs of one arch do not compile for another (fa3
// and sm90 need sm_90a).
std::string profile_for_arch(const std::string& profile, bool profile_given,
                             const std::string& arch);

// --db, else $KERNTUNE_DB, else the user cache directory.
std::string resolve_database_path(const std::string& option);
cache::Database open_database(const std::string& option);

// A progress line on stderr with the ETA: redrawn in place on a terminal, a line per step
// (throttled) otherwise.
tune::ProgressFn progress_printer();

// The named shape suites of every op (`--suite foundation`): "op/name" spelled by name alone.
std::vector<std::string> suite_names();

}  // namespace kt::cli
