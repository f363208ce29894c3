// Options shared by the subcommands (problem, database, device) and the terminal helpers.
// tools/ parses and prints; everything it does is a call into the library.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <optional>
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
  // The problem keys these options name (every --shape, then the suite's); a --shape that is
  // already a key of the op is taken as it is (--dtype does not apply to it; --out-dtype,
  // --layout and op flags beside it are an error). Throws kt::Error naming the bad value (an
  // unknown op, a malformed shape field or key, a flag foreign to the op, another op's key).
  std::vector<std::string> problem_keys() const;
};

void add_problem_options(CLI::App& cmd, ProblemOptions& options);
void add_database_option(CLI::App& cmd, std::string& path);
// --benchmark N (0 to env::kMaxBenchmarkCandidates): benchmark mode's configs a first call times;
// `what` says what the command does with it.
void add_benchmark_option(CLI::App& cmd, int& count, const std::string& what);
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
// For the commands that write (tune, cache import, merge, migrate, blocklist --clear): created
// when absent, migrated when older.
cache::Database open_database(const std::string& option);
// For every command that only reads: the database opened read-only, never created, migrated or
// written; nullopt when no file is at the path (each command says what that means: see
// no_database_note). Throws kt::Error for a file it cannot read as this kerntune's database
// (damaged, foreign, empty, newer, or of an older schema: that message names `kerntune cache
// migrate`).
std::optional<cache::Database> open_existing_database(const std::string& option);
// open_existing_database for a command that cannot do without one: a missing file is kt::Error
// (kNotFound) saying that `what` needs a database and how one is made.
cache::Database required_existing_database(const std::string& option, const char* what);
// "no database at 'PATH' yet: ..." with the commands that create one.
std::string no_database_note(const std::string& path);

// Where a run of several shapes stands, for its progress lines: the shape being tuned (0-based)
// of `count`, and the time the shapes tuned so far took (skipped ones count as none).
struct SuitePosition {
  std::size_t index = 0;
  std::size_t count = 1;
  std::size_t tuned = 0;
  double tuned_s = 0;
  std::chrono::steady_clock::time_point shape_start = std::chrono::steady_clock::now();
};

// A progress line on stderr with the ETA: redrawn in place on a terminal, a line per step
// (throttled) otherwise. With `suite` (read at each step) and more than one shape, the line
// starts with the shape's index and the whole run's ETA: the mean time of the shapes tuned so far
// for each one left, less what the current one has taken.
tune::ProgressFn progress_printer(std::shared_ptr<const SuitePosition> suite = nullptr);

// The named shape suites of every op (`--suite foundation`): "op/name" spelled by name alone.
std::vector<std::string> suite_names();

}  // namespace kt::cli
