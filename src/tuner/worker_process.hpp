// One worker process of the tuner (`kerntune-worker compile|bench`), started with posix_spawn
// (never fork: the tuner may hold a CUDA context and threads) and spoken to over a socket pair
// with the worker protocol. A worker that dies or runs past its deadline is reaped (killed
// first) and started afresh by the next request: the tuner never dies with a worker.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "tuner/worker_protocol.hpp"

namespace kt::tune {

// The worker executable: $KERNTUNE_WORKER, else `kerntune-worker` next to this executable, else
// ../libexec/kerntune/kerntune-worker from this executable's directory (the install layout).
// Throws kt::Error (kNotFound) naming the places it looked and the fix.
std::string worker_executable();

struct WorkerReply {
  enum class Kind { kReply, kDied, kTimedOut };
  Kind kind = Kind::kDied;
  Message message;    // kReply
  std::string death;  // kDied, kTimedOut: e.g. "killed by signal 11 (Segmentation fault)"
};

class WorkerProcess {
 public:
  // role: "compile" or "bench". Nothing starts until the first request.
  explicit WorkerProcess(std::string role);
  ~WorkerProcess();  // kills and reaps a running worker
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `request` (starting the worker first when none is running) and waits at most
  // timeout_s for its reply. kDied: the worker exited or was killed before replying; kTimedOut:
  // it did not reply in time and was killed. Either way the next request starts a new worker.
  // Throws kt::Error when the worker cannot be started at all, or when a started one does not
  // say it is ready ({ready: role}) before reading any request: it exits at once (not a
  // kerntune-worker, e.g. KERNTUNE_WORKER=/bin/true) or cannot run here.
  WorkerReply request(const Message& request, double timeout_s);

  // Reaps the worker after it announced its own exit (a reply with `exiting` set).
  void reap();
  // Worker processes started so far (1 after the first request; each restart adds one).
  int num_starts() const { return num_starts_; }
  bool running() const { return pid_ > 0; }

 private:
  void start();
  // Waits for the started worker's {ready: role}; throws kt::Error (kNotFound) after reaping it
  // when that does not come.
  void await_ready(const std::string& exe);
  // Waits for the worker to end (SIGKILL first when kill); returns how it ended.
  std::string stop(bool kill);

  std::string role_;
  pid_t pid_ = -1;
  int fd_ = -1;
  int num_starts_ = 0;
};

}  // namespace kt::tune
