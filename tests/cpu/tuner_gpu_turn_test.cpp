// GPU turns: threads of one ordinal hold the turn one at a time, other ordinals do not wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tuner/gpu_turn.hpp"

namespace kt::tune {
namespace {

TEST(GpuTurn, ThreadsOfOneOrdinalTakeTurns) {
  std::atomic<int> holding{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        const std::unique_lock turn = take_gpu_turn(7);
        most = std::max(most.load(), ++holding);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --holding;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(most.load(), 1);
}

TEST(GpuTurn, AnotherOrdinalDoesNotWait) {
  const std::unique_lock first = take_gpu_turn(3);
  std::atomic<bool> got{false};
  std::thread other([&] {
    const std::unique_lock turn = take_gpu_turn(4);
    got = true;
  });
  other.join();  // would never return if ordinal 4 waited for ordinal 3's turn
  EXPECT_TRUE(got.load());
  EXPECT_TRUE(first.owns_lock());
}

}  // namespace
}  // namespace kt::tune
