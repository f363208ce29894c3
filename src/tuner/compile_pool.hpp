// The compile threads of one problem's tuning, kept across its rounds, and the hand-off of a
// round's compiled candidates to the measurer. Round jobs (a round's candidates, submitted in
// model order) run first, in the order submitted; a thread with no round job takes a speculative
// key: the first of the tuner's latest list (what the search's next round will likely ask for)
// that no thread took before, so idle cores at a round's tail compile the next round ahead.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kt::tune {

class CompilePool {
 public:
  // threads: at least 1 run. speculate(key) compiles one speculative key; whatever it throws is
  // dropped (the round that asks for the key meets the failure again and reports it).
  CompilePool(int threads, std::function<void(const std::string&)> speculate);
  // Drops queued jobs and speculative keys, lets running jobs finish, joins.
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Queues a round job after those queued before. A job must not throw.
  void submit(std::function<void()> job);
  // Replaces the speculative list (best first). A key taken once is never taken again.
  void set_speculative(std::vector<std::string> keys);
  // Drops the queued round jobs and waits until no round job runs: after it, no job of the
  // round touches the round's state (a round unwinding on an error calls it).
  void cancel_round();

  int num_speculative_taken() const;

 private:
  void run();

  std::function<void(const std::string&)> speculate_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // a job, a speculative list, or the end
  std::condition_variable idle_;  // a round job finished
  std::deque<std::function<void()>> jobs_;
  std::vector<std::string> speculative_;
  std::set<std::string> taken_;
  int running_round_jobs_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// The candidates of one round whose compile finished (or failed), for the measurer: it takes the
// lowest index first (the model's best of those ready), waiting while none is ready. Indices are
// 0 .. count - 1 within the round. Thread-safe.
class CompiledQueue {
 public:
  explicit CompiledQueue(std::size_t count);

  // A compile job is done with candidate `index` (successfully or not).
  void done(std::size_t index);
  // A compile job failed in a way no candidate owns (kt::Error: the worker cannot start, NVRTC
  // is missing); take() rethrows the first such failure.
  void fail(std::exception_ptr error);
  // The lowest done index not taken yet, waiting while there is none; nullopt once all are
  // taken. Rethrows a failure.
  std::optional<std::size_t> take();

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<bool> done_;
  std::vector<bool> taken_;
  std::size_t num_taken_ = 0;
  std::exception_ptr error_;
};

}  // namespace kt::tune
