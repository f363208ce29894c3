// kerntune-worker: the process the tuner runs untrusted candidates in. `kerntune-worker compile`
// compiles generated sources with NVRTC; `kerntune-worker bench` verifies and times candidates
// on one GPU. Started by the tuner only (src/tuner/worker_process.cpp), with its end of a
// socket pair as --fd and the tuner's pid as --parent; it exits when the tuner goes away.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "core/env.hpp"
#include "core/log.hpp"
#include "tuner/worker_protocol.hpp"
#include "tuner/worker_server.hpp"

namespace {

constexpr const char* kUsage =
    "usage: kerntune-worker compile|bench --fd N --parent PID\n"
    "This program is started by `kerntune tune`; it is not meant to be run by hand.\n";

constexpr int kCompileNiceness = 10;

// NOTE: a worker blocked in a hung kernel or in NVRTC never reads its socket again, so it
// cannot notice the tuner's death from there (and PR_SET_PDEATHSIG follows the spawning
// thread, not the process). A watchdog polls the parent's pid instead.
void exit_when_orphaned(pid_t parent) {
  std::thread([parent] {
    while (getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    _exit(2);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 || std::strcmp(argv[2], "--fd") != 0 || std::strcmp(argv[4], "--parent") != 0) {
    fmt::print(stderr, "{}", kUsage);
    return 64;
  }
  const std::string role = argv[1];
  const int fd = std::atoi(argv[3]);
  exit_when_orphaned(pid_t(std::atoi(argv[5])));
  // A crashing candidate is expected here: no core files.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  kt::logger().set_level(spdlog::level::warn);
  if (auto level = kt::env::log_level()) kt::logger().set_level(spdlog::level::from_str(*level));
  if (role != "compile" && role != "bench") {
    fmt::print(stderr, "kerntune-worker: unknown role '{}'\n{}", role, kUsage);
    return 64;
  }
  // Compiles yield the CPU to measurements: a benchmark worker descheduled between its timing
  // events and its launch times the gap too, and compiles run beside measurements (another
  // tuning worker of `fleet run --devices`, a pipelined tune). Failing to lower it is harmless.
  if (role == "compile") setpriority(PRIO_PROCESS, 0, kCompileNiceness);
  // The tuner waits for this before its first request (WorkerProcess::await_ready).
  kt::tune::Message ready;
  ready.set("ready", role);
  if (!kt::tune::write_message(fd, ready)) return 1;
  return role == "compile" ? kt::tune::serve_compile(fd) : kt::tune::serve_bench(fd);
}
