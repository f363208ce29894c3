// Many processes on one database file: 8 writers store their own measurements in small
// transactions while a reader performs the runtime's dispatch lookup and sets winners. Every row
// arrives exactly once, no process sees an error (a locked database is waited for and retried),
// and merging the result twice into another file adds nothing the second time.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "support/scratch_dir.hpp"

extern char** environ;

namespace kt::cache {
namespace {

namespace fs = std::filesystem;

constexpr int kWriters = 8;
constexpr int kRowsEach = 300;
constexpr int kRowsPerTransaction = 3;

using kt::testing::ScratchDir;

// A kt_test_db_worker process with its stdout in `out_path`.
pid_t spawn_worker(const std::vector<std::string>& args, const std::string& out_path) {
  std::vector<std::string> argv_storage = {KT_DB_WORKER};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CacheConcurrency, EightWritersAndADispatchingReaderLoseNothingAndSeeNoError) {
  ScratchDir dir;
  const std::string path = dir.file("shared.db");
  const std::string stop = dir.file("stop");
  Database::open(path);

  const pid_t reader = spawn_worker({"reader", path, stop}, dir.file("reader.out"));
  ASSERT_GT(reader, 0);
  std::vector<pid_t> writers;
  for (int id = 0; id < kWriters; ++id) {
    writers.push_back(spawn_worker({"writer", path, std::to_string(id), std::to_string(kRowsEach),
                                    std::to_string(kRowsPerTransaction)},
                                   dir.file(fmt::format("writer{}.out", id))));
    ASSERT_GT(writers.back(), 0);
  }
  for (int id = 0; id < kWriters; ++id) {
    const int code = wait_exit_code(writers[id]);
    const std::string out = read_text(dir.file(fmt::format("writer{}.out", id)));
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find(fmt::format("writer id={} rows={} ", id, kRowsEach)), std::string::npos)
        << out;
    EXPECT_NE(out.find("errors=0"), std::string::npos) << out;
    std::cout << out;
  }
  std::ofstream(stop) << "stop\n";
  const int reader_code = wait_exit_code(reader);
  const std::string reader_out = read_text(dir.file("reader.out"));
  EXPECT_EQ(reader_code, 0) << reader_out;
  EXPECT_NE(reader_out.find("errors=0"), std::string::npos) << reader_out;
  std::cout << reader_out;

  Database db = Database::open_readonly(path);
  std::map<std::string, int> copies;
  for (const Measurement& m : db.all_measurements()) ++copies[m.detail];
  EXPECT_EQ(copies.size(), std::size_t{kWriters} * kRowsEach);
  for (int id = 0; id < kWriters; ++id)
    for (int row = 0; row < kRowsEach; ++row)
      EXPECT_EQ(copies[fmt::format("w{}-{}", id, row)], 1) << "writer " << id << " row " << row;
  const Summary summary = db.summary();
  EXPECT_EQ(summary.num_measurements, std::int64_t{kWriters} * kRowsEach);
  EXPECT_GT(summary.num_winners, 0);

  Database merged = Database::open(dir.file("merged.db"));
  EXPECT_EQ(merged.merge_from(path), summary.num_measurements + summary.num_winners);
  EXPECT_EQ(merged.merge_from(path), 0);
  const Summary after = merged.summary();
  EXPECT_EQ(after.num_measurements, summary.num_measurements);
  EXPECT_EQ(after.num_winners, summary.num_winners);
}

}  // namespace
}  // namespace kt::cache
