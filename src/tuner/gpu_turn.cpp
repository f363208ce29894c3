// One mutex per device ordinal, created on first use and kept for the process's life.
#include "tuner/gpu_turn.hpp"

#include <map>

namespace kt::tune {

std::unique_lock<std::mutex> take_gpu_turn(int device_ordinal) {
  static std::mutex turns_mutex;
  static std::map<int, std::mutex> turns;  // nodes never move: the references stay valid
  std::mutex* turn = nullptr;
  {
    const std::lock_guard lock(turns_mutex);
    turn = &turns[device_ordinal];
  }
  return std::unique_lock(*turn);
}

}  // namespace kt::tune
