// The compile pool and the compiled-candidate hand-off.
#include "tuner/compile_pool.hpp"

#include <algorithm>

#include "core/log.hpp"

namespace kt::tune {

CompilePool::CompilePool(int threads, std::function<void(const std::string&)> speculate)
    : speculate_(std::move(speculate)) {
  for (int t = 0; t < std::max(threads, 1); ++t) threads_.emplace_back([this] { run(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    jobs_.clear();
    speculative_.clear();
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void CompilePool::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void CompilePool::set_speculative(std::vector<std::string> keys) {
  {
    std::lock_guard lock(mutex_);
    speculative_ = std::move(keys);
  }
  wake_.notify_all();
}

void CompilePool::cancel_round() {
  std::unique_lock lock(mutex_);
  jobs_.clear();
  idle_.wait(lock, [&] { return running_round_jobs_ == 0; });
}

int CompilePool::num_speculative_taken() const {
  std::lock_guard lock(mutex_);
  return int(taken_.size());
}

void CompilePool::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    auto untaken = std::find_if(speculative_.begin(), speculative_.end(),
                                [&](const std::string& key) { return !taken_.count(key); });
    if (stopping_) return;
    if (!jobs_.empty()) {
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_round_jobs_;
      lock.unlock();
      job();
      lock.lock();
      --running_round_jobs_;
      idle_.notify_all();
    } else if (untaken != speculative_.end()) {
      const std::string key = *untaken;
      taken_.insert(key);
      lock.unlock();
      try {
        speculate_(key);
      } catch (const std::exception& e) {
        logger().debug("speculative compile failed config={} detail=\"{}\"", key, e.what());
      } catch (...) {
        logger().debug("speculative compile failed config={}", key);
      }
      lock.lock();
    } else {
      wake_.wait(lock);
    }
  }
}

CompiledQueue::CompiledQueue(std::size_t count) : done_(count, false), taken_(count, false) {}

void CompiledQueue::done(std::size_t index) {
  {
    std::lock_guard lock(mutex_);
    done_.at(index) = true;
  }
  ready_.notify_one();
}

void CompiledQueue::fail(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = error;
  }
  ready_.notify_one();
}

std::optional<std::size_t> CompiledQueue::take() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (error_) std::rethrow_exception(error_);
    if (num_taken_ == done_.size()) return std::nullopt;
    for (std::size_t i = 0; i < done_.size(); ++i)
      if (done_[i] && !taken_[i]) {
        taken_[i] = true;
        ++num_taken_;
        return i;
      }
    ready_.wait(lock);
  }
}

}  // namespace kt::tune
