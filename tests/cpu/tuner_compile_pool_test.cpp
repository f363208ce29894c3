// The compile pool and the hand-off of compiled candidates (compile_pool.hpp): round jobs run in
// the order submitted and before any speculative key; a speculative key is compiled once
// whatever the lists say later; a cancelled round's queued jobs never run and its running ones
// finish first; the measurer takes the lowest compiled index first and waits for one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tuner/compile_pool.hpp"

namespace kt::tune {
namespace {

using namespace std::chrono_literals;

// What the pool ran, in order.
struct Trace {
  std::mutex mutex;
  std::vector<std::string> ran;
  void add(const std::string& what) {
    std::lock_guard lock(mutex);
    ran.push_back(what);
  }
  std::vector<std::string> get() {
    std::lock_guard lock(mutex);
    return ran;
  }
};

// Polls until `done` holds (a pool runs on its own threads), at most a few seconds.
template <class Done>
bool eventually(Done done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(CompilePool, RoundJobsRunInSubmitOrderBeforeSpeculativeKeys) {
  Trace trace;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  CompilePool pool(1, [&](const std::string& key) { trace.add("ahead " + key); });
  pool.submit([&] {
    released.wait();
    trace.add("job 0");
  });
  // While job 0 holds the only thread: a speculative list, then two more round jobs.
  pool.set_speculative({"a", "b"});
  pool.submit([&] { trace.add("job 1"); });
  pool.submit([&] { trace.add("job 2"); });
  release.set_value();
  ASSERT_TRUE(eventually([&] { return trace.get().size() == 5; }));
  EXPECT_EQ(trace.get(),
            (std::vector<std::string>{"job 0", "job 1", "job 2", "ahead a", "ahead b"}));
}

TEST(CompilePool, ASpeculativeKeyIsCompiledOnceWhateverLaterListsSay) {
  Trace trace;
  CompilePool pool(2, [&](const std::string& key) { trace.add(key); });
  pool.set_speculative({"a", "b"});
  ASSERT_TRUE(eventually([&] { return trace.get().size() == 2; }));
  pool.set_speculative({"b", "c", "a"});
  ASSERT_TRUE(eventually([&] { return trace.get().size() == 3; }));
  std::this_thread::sleep_for(50ms);
  const std::vector<std::string> ran = trace.get();
  EXPECT_EQ(ran.size(), 3u);
  EXPECT_EQ(ran.back(), "c");
  EXPECT_EQ(pool.num_speculative_taken(), 3);
}

TEST(CompilePool, AFailingSpeculativeCompileLeavesThePoolWorking) {
  Trace trace;
  CompilePool pool(1, [&](const std::string& key) {
    if (key == "bad") throw std::runtime_error("no compiler");
    trace.add(key);
  });
  pool.set_speculative({"bad", "good"});
  ASSERT_TRUE(eventually([&] { return trace.get().size() == 1; }));
  pool.submit([&] { trace.add("job"); });
  ASSERT_TRUE(eventually([&] { return trace.get().size() == 2; }));
  EXPECT_EQ(trace.get(), (std::vector<std::string>{"good", "job"}));
}

TEST(CompilePool, CancelRoundDropsQueuedJobsAndWaitsForTheRunningOne) {
  Trace trace;
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  CompilePool pool(1, [](const std::string&) {});
  pool.submit([&] {
    started.set_value();
    released.wait();
    trace.add("running");
  });
  pool.submit([&] { trace.add("queued"); });
  started.get_future().wait();
  std::atomic<bool> cancelled{false};
  std::thread canceller([&] {
    pool.cancel_round();
    cancelled = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(cancelled);  // the running job still holds the round
  release.set_value();
  canceller.join();
  EXPECT_TRUE(cancelled);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(trace.get(), (std::vector<std::string>{"running"}));
}

TEST(CompiledQueue, TheLowestCompiledIndexComesFirst) {
  CompiledQueue queue(3);
  queue.done(2);
  queue.done(0);
  EXPECT_EQ(queue.take(), 0u);
  EXPECT_EQ(queue.take(), 2u);
  queue.done(1);
  EXPECT_EQ(queue.take(), 1u);
  EXPECT_EQ(queue.take(), std::nullopt);  // every index taken
}

TEST(CompiledQueue, TakeWaitsForACompileToFinish) {
  CompiledQueue queue(2);
  std::thread compiler([&] {
    std::this_thread::sleep_for(50ms);
    queue.done(1);
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(queue.take(), 1u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 40ms);
  compiler.join();
}

TEST(CompiledQueue, AFailureNoCandidateOwnsIsRethrownToTheMeasurer) {
  CompiledQueue queue(2);
  queue.done(0);
  queue.fail(std::make_exception_ptr(std::runtime_error("NVRTC not found")));
  EXPECT_THROW(queue.take(), std::runtime_error);
}

}  // namespace
}  // namespace kt::tune
