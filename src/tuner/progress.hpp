// Progress of a tuning phase (compile, measure, finalists) with an ETA, reported through the
// caller's callback (the library never prints; tools/ does).
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace kt::tune {

struct Progress {
  std::string phase;  // "compile", "measure", "finalists"
  int done = 0;
  int total = 0;
  double elapsed_s = 0;
  double eta_s = 0;     // remaining time at the current rate
  std::string message;  // the candidate just finished and its outcome
};
using ProgressFn = std::function<void(const Progress&)>;

// Counts finished steps of one phase; thread-safe.
class ProgressTracker {
 public:
  ProgressTracker(const ProgressFn& fn, std::string phase, int total);
  void step(const std::string& message);

 private:
  const ProgressFn& fn_;
  std::string phase_;
  int total_;
  int done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

}  // namespace kt::tune
