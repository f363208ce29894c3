// Progress tracking.
#include "tuner/progress.hpp"

namespace kt::tune {

ProgressTracker::ProgressTracker(const ProgressFn& fn, std::string phase, int total)
    : fn_(fn), phase_(std::move(phase)), total_(total), start_(std::chrono::steady_clock::now()) {}

void ProgressTracker::step(const std::string& message) {
  std::lock_guard lock(mutex_);
  ++done_;
  if (!fn_) return;
  Progress p;
  p.phase = phase_;
  p.done = done_;
  p.total = total_;
  p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  p.eta_s = p.elapsed_s / done_ * (total_ - done_);
  p.message = message;
  fn_(p);
}

}  // namespace kt::tune
