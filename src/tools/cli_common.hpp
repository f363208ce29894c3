// Options shared by the subcommands (problem, database, device) and the terminal helpers.
// tools/ parses and prints; everything it does is a call into the library.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/attention_problem.hpp"
#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "tuner/gemm_tuner.hpp"

namespace kt::cli {

struct ProblemOptions {
  std::string op = "gemm";
  std::vector<std::string> shapes;
  std::string suite;
  std::string dtype = "bf16";
  std::string out_dtype;  // empty: same as dtype
  std::string layout = "nt";
  bool causal = false;
  bool shape_required = true;

  bool is_attention() const;  // throws on an unknown --op
  // The problems these options name (every --shape, then the suite's). Throws kt::Error
  // naming the bad value.
  std::vector<GemmProblem> gemm_problems() const;
  std::vector<AttentionProblem> attention_problems() const;
};

void add_problem_options(CLI::App& cmd, ProblemOptions& options);
void add_database_option(CLI::App& cmd, std::string& path);
void add_profile_option(CLI::App& cmd, std::string& profile);

// --db, else $KERNTUNE_DB, else the user cache directory.
std::string resolve_database_path(const std::string& option);
cache::Database open_database(const std::string& option);

// A progress line on stderr with the ETA: redrawn in place on a terminal, a line per step
// (throttled) otherwise.
tune::ProgressFn progress_printer();

// The named shape suites (`--suite foundation`).
std::vector<std::string> suite_names();
std::vector<std::string> suite_shapes(const std::string& name);

}  // namespace kt::cli
