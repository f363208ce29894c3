// Runs the built kerntune CLI as a subprocess for the CLI tests of every tier: a given database,
// no CUDA driver (so a GPU machine behaves like CI), stdout and stderr captured together.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kt::testing {

struct CliResult {
  int status = -1;     // exit status of the CLI
  std::string output;  // stdout and stderr interleaved
};

inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `command` with /bin/sh, stdout and stderr captured together.
inline CliResult run_shell(const std::string& command) {
  CliResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The shell command that runs `kerntune <args>` with the database at `db` and no CUDA driver;
// `env` (e.g. "KERNTUNE_WORKER=/bin/true") is set for it too.
inline std::string cli_command(const std::string& args, const std::string& db,
                               const std::string& env = "") {
  return "KERNTUNE_DB=" + shell_quote(db) +
         " KERNTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1"
         " KERNTUNE_LOG_LEVEL=info " +
         env + " " + shell_quote(KT_BINARY_DIR "/src/tools/kerntune") + " " + args;
}

// Runs `kerntune <args>` (cli_command), stdout and stderr captured together.
inline CliResult run_cli(const std::string& args, const std::string& db,
                         const std::string& env = "") {
  return run_shell(cli_command(args, db, env));
}

// Runs `kerntune <args>` (cli_command) with its stdout written to the file `stdout_path` and
// only its stderr captured: for output that must be stdout alone (--json).
inline CliResult run_cli_stdout_to(const std::string& stdout_path, const std::string& args,
                                   const std::string& db, const std::string& env = "") {
  return run_shell("{ " + cli_command(args, db, env) + " >" + shell_quote(stdout_path) + "; }");
}

}  // namespace kt::testing
