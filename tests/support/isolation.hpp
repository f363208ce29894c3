// Support for the crash-isolation and resume tests of every tier: the worker executable of this
// build, a scratch database file, the CLI started as a killable child, and the consistency
// checks a database must pass after any number of killed and resumed tuning runs.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "tuner/run_ledger.hpp"

extern char** environ;

namespace kt::testing {

// The prefix of an installed test binary (<prefix>/libexec/kerntune/, beside kerntune-worker):
// such a binary uses the worker and CLI installed with it, never a build tree that may also be
// on the machine (another build of possibly other code).
inline std::optional<std::filesystem::path> installed_prefix() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || !std::filesystem::exists(self.parent_path() / "kerntune-worker", error))
    return std::nullopt;
  return self.parent_path().parent_path().parent_path();
}

// Points KERNTUNE_WORKER at this build's kerntune-worker: the one installed beside an installed
// test, else where CMake built it, else at the same place relative to this test binary (a build
// tree copied elsewhere).
inline void use_built_worker() {
  if (const auto prefix = installed_prefix()) {
    setenv("KERNTUNE_WORKER", (*prefix / "libexec" / "kerntune" / "kerntune-worker").c_str(), 1);
    return;
  }
  if (std::filesystem::exists(KT_WORKER_PATH)) {
    setenv("KERNTUNE_WORKER", KT_WORKER_PATH, 1);
    return;
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path copied =
      self.parent_path().parent_path() / "src" / "tools" / "kerntune-worker";
  if (!error && std::filesystem::exists(copied)) setenv("KERNTUNE_WORKER", copied.c_str(), 1);
}

// A database file in the temporary directory, removed (with its WAL files) at the end.
class ScratchDb {
 public:
  explicit ScratchDb(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               (name + "_" + std::to_string(getpid()) + ".db"))
                  .string()) {
    remove();
  }
  ~ScratchDb() { remove(); }
  ScratchDb(const ScratchDb&) = delete;
  ScratchDb& operator=(const ScratchDb&) = delete;
  const std::string& path() const { return path_; }

 private:
  void remove() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(path_ + suffix, ignored);
  }
  std::string path_;
};

// The kerntune CLI of this build: <prefix>/bin/kerntune for an installed test, else the build
// tree's.
inline std::string cli_executable() {
  if (const auto prefix = installed_prefix()) return (*prefix / "bin" / "kerntune").string();
  return KT_BINARY_DIR "/src/tools/kerntune";
}

// Starts `kerntune <args>` with extra environment entries ("NAME=value"), output to `log`.
inline pid_t start_cli(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       const std::string& log) {
  std::vector<std::string> argv_text = {cli_executable()};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<std::string> env_text = env;
  for (char** e = environ; *e != nullptr; ++e) env_text.emplace_back(*e);
  std::vector<char*> argv, envp;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

inline int wait_exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// After any number of killed and resumed runs, once the last run finished: every run is done,
// no run holds two first-pass rows of one config, every run holds `rows_per_run` of them (all
// its candidates), no run re-measured a finalist twice, and each of `problems` has exactly one
// winner, from a finished run.
inline void expect_consistent(const std::string& db_path, const std::vector<std::string>& problems,
                              std::size_t rows_per_run) {
  cache::Database db = cache::Database::open(db_path);
  std::map<std::string, std::multiset<std::string>> first_pass;  // run id -> config keys
  std::set<std::pair<std::string, std::string>> finalists;       // (run id, config key)
  for (const cache::Measurement& m : db.all_measurements()) {
    if (m.detail.rfind(tune::kFinalistDetail, 0) != 0)
      first_pass[m.run_id].insert(m.config_key);
    else
      EXPECT_TRUE(finalists.emplace(m.run_id, m.config_key).second)
          << "run " << m.run_id << " re-measured finalist " << m.config_key << " twice";
  }
  for (const auto& [run_id, configs] : first_pass) {
    const auto run = db.find_run(run_id);
    ASSERT_TRUE(run.has_value()) << "rows of an unknown run " << run_id;
    EXPECT_TRUE(run->done) << "run " << run_id << " was left running";
    EXPECT_EQ(configs.size(), rows_per_run) << "run " << run_id << " is incomplete";
    for (const std::string& c : configs)
      EXPECT_EQ(configs.count(c), 1u) << "run " << run_id << " measured " << c << " twice";
  }
  std::set<std::string> winners;
  for (const cache::Winner& w : db.all_winners()) {
    EXPECT_TRUE(winners.insert(w.key.problem_key).second)
        << "two winners for " << w.key.problem_key;
    const auto run = db.find_run(w.run_id);
    ASSERT_TRUE(run.has_value()) << "winner of an unknown run " << w.run_id;
    EXPECT_TRUE(run->done);
  }
  for (const std::string& p : problems) EXPECT_TRUE(winners.count(p)) << "no winner for " << p;
  cache::sql::Connection raw =
      cache::sql::Connection::open(db_path, cache::sql::OpenMode::kReadOnly);
  cache::sql::Statement running(raw, "SELECT count(*) FROM tuning_runs WHERE state <> 'done'");
  ASSERT_TRUE(running.step());
  EXPECT_EQ(running.column_int64(0), 0) << "runs left unfinished";
}

}  // namespace kt::testing
