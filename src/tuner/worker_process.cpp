// Starting, talking to, and reaping worker processes.
#include "tuner/worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

extern char** environ;

namespace kt::tune {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWorkerName = "kerntune-worker";
// The fd number on which a worker finds its end of the socket pair.
constexpr int kWorkerFd = 3;
// A worker says it is ready before it reads a request; starting a process and loading its
// libraries takes milliseconds, so a worker silent this long cannot run here.
constexpr double kReadyTimeoutS = 60;

std::string describe_status(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("ended with wait status {:#x}", status);
}

}  // namespace

std::string worker_executable() {
  if (auto path = env::worker_path()) {
    if (fs::exists(*path)) return *path;
    throw Error(ErrorKind::kNotFound,
                fmt::format("KERNTUNE_WORKER names '{}', which does not exist; point it at the "
                            "kerntune-worker executable or unset it",
                            *path));
  }
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  std::vector<fs::path> tried;
  if (!error) {
    tried.push_back(self.parent_path() / kWorkerName);
    tried.push_back(self.parent_path().parent_path() / "libexec" / "kerntune" / kWorkerName);
  }
  for (const fs::path& p : tried)
    if (fs::exists(p, error)) return p.string();
  std::string places;
  for (const fs::path& p : tried) places.append(" ").append(p.string());
  throw Error(ErrorKind::kNotFound,
              fmt::format("the kerntune-worker executable was not found (looked at{}); build "
                          "the kerntune-worker target or install kerntune, or set "
                          "KERNTUNE_WORKER to its path",
                          places.empty() ? " nothing: /proc/self/exe is unreadable" : places));
}

WorkerProcess::WorkerProcess(std::string role) : role_(std::move(role)) {}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) stop(true);
}

void WorkerProcess::start() {
  const std::string exe = worker_executable();
  int fds[2];
  // NOTE: CLOEXEC on both ends, so that workers spawned concurrently by other threads never
  // inherit this pair; the dup2 below gives the child its end without the flag.
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(ErrorKind::kInternal, fmt::format("socketpair: {}", std::strerror(errno)));
  int child_end = fds[1];
  if (child_end == kWorkerFd) {  // dup2 onto itself would keep CLOEXEC
    child_end = fcntl(fds[1], F_DUPFD_CLOEXEC, kWorkerFd + 1);
    close(fds[1]);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_end, kWorkerFd);
  const std::string parent = std::to_string(getpid());
  const std::string fd = std::to_string(kWorkerFd);
  std::vector<std::string> args = {exe, role_, "--fd", fd, "--parent", parent};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(child_end);
  if (rc != 0) {
    close(fds[0]);
    throw Error(ErrorKind::kInternal,
                fmt::format("cannot start the {} worker '{}': {}; check that it is executable "
                            "or set KERNTUNE_WORKER",
                            role_, exe, std::strerror(rc)));
  }
  pid_ = pid;
  fd_ = fds[0];
  ++num_starts_;
  logger().debug("worker started role={} pid={} starts={}", role_, pid_, num_starts_);
  await_ready(exe);
}

void WorkerProcess::await_ready(const std::string& exe) {
  Message hello;
  ReadResult result = ReadResult::kClosed;
  try {
    result = read_message(fd_, hello, kReadyTimeoutS);
  } catch (const Error&) {  // a malformed frame: not a kerntune worker
  }
  if (result == ReadResult::kMessage && hello.find("ready") == role_) return;
  const std::string what =
      result == ReadResult::kTimedOut
          ? fmt::format("said nothing within {:.0f} s ({})", kReadyTimeoutS, stop(true))
      : result == ReadResult::kMessage
          ? fmt::format("answered but not as a {} worker ({})", role_, stop(true))
          : fmt::format("{} before it was ready", stop(true));
  // NOTE: no candidate's outcome: nothing could have run, and a kernel blamed for this would be
  // blocklisted for a fault of the host.
  throw Error(ErrorKind::kNotFound,
              fmt::format("the {} worker '{}' {}: it is not this build's kerntune-worker or "
                          "cannot run here; point KERNTUNE_WORKER at kerntune-worker, or unset "
                          "it to use the one installed beside kerntune",
                          role_, exe, what));
}

std::string WorkerProcess::stop(bool kill_first) {
  if (kill_first) ::kill(pid_, SIGKILL);
  close(fd_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string how = describe_status(status);
  logger().debug("worker ended role={} pid={} how=\"{}\"", role_, pid_, how);
  pid_ = -1;
  fd_ = -1;
  return how;
}

void WorkerProcess::reap() {
  if (pid_ > 0) stop(false);
}

WorkerReply WorkerProcess::request(const Message& request, double timeout_s) {
  if (pid_ > 0) {  // a worker that ended on its own since the last request is not reused
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      close(fd_);
      pid_ = -1;
      fd_ = -1;
    }
  }
  if (pid_ <= 0) start();
  WorkerReply reply;
  if (write_message(fd_, request)) {
    switch (read_message(fd_, reply.message, timeout_s)) {
      case ReadResult::kMessage:
        reply.kind = WorkerReply::Kind::kReply;
        return reply;
      case ReadResult::kTimedOut:
        reply.kind = WorkerReply::Kind::kTimedOut;
        reply.death =
            fmt::format("no reply within {:.1f} s; worker killed ({})", timeout_s, stop(true));
        return reply;
      case ReadResult::kClosed:
        break;
    }
  }
  reply.kind = WorkerReply::Kind::kDied;
  reply.death = stop(true);  // already dead: SIGKILL changes nothing and waitpid says how
  return reply;
}

}  // namespace kt::tune
