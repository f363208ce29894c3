// Record mode's manifest writer: each problem once with its device and the version line, in a
// file `kerntune fleet run` parses; several processes and threads appending at once leave whole
// lines, each once; an edited file is appended to, not rewritten; a file it cannot open is an
// error naming it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/manifest.hpp"
#include "runtime/problem_recorder.hpp"
#include "support/scratch_dir.hpp"

namespace kt {
namespace {

using testing::ScratchDir;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// How many lines of `text` are exactly `line`.
int count_lines(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  int n = 0;
  for (std::string l; std::getline(in, l);) n += l == line;
  return n;
}

std::vector<std::string> problem_keys(int count) {
  std::vector<std::string> keys;
  for (int i = 0; i < count; ++i) {
    if (i % 3 == 0) keys.push_back("gemm:bf16:bf16:nt:" + std::to_string(64 + i) + "x4096x4096");
    if (i % 3 == 1) keys.push_back("rmsnorm:bf16:r" + std::to_string(100 + i) + ".h4096.res");
    if (i % 3 == 2)
      keys.push_back("attn:bf16:b1.hq8.hkv8.sq" + std::to_string(128 + i) + ".sk1024.d128.causal");
  }
  return keys;
}

TEST(ProblemRecorder, RecordsEachProblemOnceWithItsDeviceAndTheVersionLine) {
  ScratchDir dir;
  const std::string path = dir.file("recorded.manifest");
  rt::ProblemRecorder recorder(path);
  const DeviceDesc& h200 = device_profile("h200");
  EXPECT_TRUE(recorder.record("gemm:bf16:bf16:nt:4000x4096x4096", h200));
  EXPECT_TRUE(recorder.record("rmsnorm:bf16:r8192.h4096.res", h200));
  EXPECT_FALSE(recorder.record("gemm:bf16:bf16:nt:4000x4096x4096", h200));
  // Another recorder (another process, as far as the file knows) does not repeat it either.
  rt::ProblemRecorder other(path);
  EXPECT_FALSE(other.record("rmsnorm:bf16:r8192.h4096.res", h200));
  EXPECT_TRUE(other.record("attn:bf16:b2.hq16.hkv4.sq512.sk512.d64.full", h200));

  const std::string text = read_text(path);
  EXPECT_EQ(text.rfind("kerntune-manifest 1\n", 0), 0u) << text;
  EXPECT_EQ(count_lines(text, "device h200"), 1) << text;
  EXPECT_EQ(count_lines(text, "gemm 4000x4096x4096"), 1) << text;
  EXPECT_EQ(count_lines(text, "rmsnorm rows=8192,hidden=4096 residual"), 1) << text;
  const Manifest m = parse_manifest(text, path);
  EXPECT_EQ(m.problem_keys, (std::vector<std::string>{
                                "gemm:bf16:bf16:nt:4000x4096x4096", "rmsnorm:bf16:r8192.h4096.res",
                                "attn:bf16:b2.hq16.hkv4.sq512.sk512.d64.full"}));
  ASSERT_EQ(m.devices.size(), 1u);
  EXPECT_EQ(m.devices[0].desc().fingerprint(), h200.fingerprint());

  // A second device of another SM count gets its own line.
  const DeviceDesc mig = device_variant(h200, "", 66, 0);
  EXPECT_TRUE(other.record("gemm:bf16:bf16:nt:1x4096x4096", mig));
  EXPECT_EQ(parse_manifest(read_text(path), path).devices.size(), 2u);
}

TEST(ProblemRecorder, ProcessesAndThreadsAppendingAtOnceLeaveEachLineWholeAndOnce) {
  ScratchDir dir;
  const std::string path = dir.file("shared.manifest");
  const std::vector<std::string> keys = problem_keys(48);
  constexpr int kProcesses = 4, kThreads = 3;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Each thread has a recorder of its own (its own descriptor and lock) or shares one.
      rt::ProblemRecorder shared(path);
      std::vector<std::thread> threads;
      int failures = 0;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          rt::ProblemRecorder own(path);
          std::vector<std::string> order = keys;
          std::rotate(order.begin(), order.begin() + (p * kThreads + t) * 5 % order.size(),
                      order.end());
          for (const std::string& key : order) {
            try {
              (t % 2 == 0 ? own : shared).record(key, device_profile("a100"));
            } catch (const Error&) {
              ++failures;
            }
          }
        });
      for (std::thread& thread : threads) thread.join();
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const std::string text = read_text(path);
  EXPECT_EQ(count_lines(text, "kerntune-manifest 1"), 1);
  EXPECT_EQ(count_lines(text, "device a100"), 1);
  const Manifest m = parse_manifest(text, path);
  EXPECT_EQ(m.problem_keys.size(), keys.size());
  for (const std::string& key : keys) EXPECT_EQ(count_lines(text, problem_line(key)), 1) << key;
  // Every line is one the recorder writes: nothing interleaved.
  std::istringstream in(text);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 1 + 1 + 1 + int(keys.size())) << text;  // version, comment, device, problems
}

TEST(ProblemRecorder, AppendsToAnEditedFileKeepingWhatItSays) {
  ScratchDir dir;
  const std::string path = dir.file("edited.manifest");
  {
    std::ofstream out(path);
    out << "kerntune-manifest 1\n# tuned for the H200s\ndevice h200   # racks 1-4\n"
           "gemm 4096x4096x4096  # the MLP\ntune candidates=8";  // no final newline
  }
  rt::ProblemRecorder recorder(path);
  EXPECT_FALSE(recorder.record("gemm:bf16:bf16:nt:4096x4096x4096", device_profile("h200")));
  EXPECT_TRUE(recorder.record("gemm:bf16:bf16:nt:16x4096x4096", device_profile("h200")));
  const std::string text = read_text(path);
  EXPECT_NE(text.find("# tuned for the H200s\n"), std::string::npos);
  EXPECT_NE(text.find("tune candidates=8\ngemm 16x4096x4096\n"), std::string::npos) << text;
  const Manifest m = parse_manifest(text, path);
  EXPECT_EQ(m.tuning.candidates, 8);
  EXPECT_EQ(m.problem_keys.size(), 2u);
  EXPECT_EQ(m.devices.size(), 1u);
}

TEST(ProblemRecorder, AFileItCannotOpenIsAnErrorNamingIt) {
  ScratchDir dir;
  rt::ProblemRecorder recorder(dir.file("no/such/dir/m.txt"));
  try {
    recorder.record("gemm:bf16:bf16:nt:64x64x64", device_profile("h200"));
    FAIL() << "recorded into a missing directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/m.txt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("open"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rt::ProblemRecorder(""), Error);
}

}  // namespace
}  // namespace kt
