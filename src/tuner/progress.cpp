// Progress tracking and the compile thread pool.
#include "tuner/progress.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

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

void parallel_for(std::size_t begin, std::size_t end, int threads,
                  const std::function<void(std::size_t)>& work) {
  if (begin >= end) return;
  const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
  const int count = std::max(1, std::min<int>(threads > 0 ? threads : hardware, int(end - begin)));
  std::atomic<std::size_t> next{begin};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> pool;
  for (int t = 0; t < count; ++t)
    pool.emplace_back([&] {
      try {
        for (std::size_t i = next++; i < end; i = next++) work(i);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = end;
      }
    });
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kt::tune
