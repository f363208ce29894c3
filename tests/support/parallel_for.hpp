// Runs fn(0) ... fn(count - 1) on as many threads as there are cores (at least two): the tests'
// way to compile many independent NVRTC programs at once. fn must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <thread>
#include <vector>

namespace kt::testing {

template <typename Fn>
void parallel_for(std::size_t count, Fn fn) {
  std::atomic<std::size_t> next{0};
  const std::size_t workers =
      std::min<std::size_t>(std::max(2u, std::thread::hardware_concurrency()), count);
  std::vector<std::future<void>> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.push_back(std::async(std::launch::async, [&] {
      for (std::size_t i = next++; i < count; i = next++) fn(i);
    }));
  for (auto& f : pool) f.get();
}

}  // namespace kt::testing
