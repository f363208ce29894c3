// Turns on a GPU for the tuning threads of one process: a benchmark worker's set-up and each of
// its timing requests hold the turn of their device ordinal, so two workers sharing a GPU (`fleet
// run --devices 0,0`) never time a kernel while the other's work runs on it. Host work (compiles)
// takes no turn. Processes do not share turns: one process per GPU is the contract across them.
#pragma once

#include <mutex>

namespace kt::tune {

// Blocks until this thread has the GPU `device_ordinal`; the turn ends with the lock.
std::unique_lock<std::mutex> take_gpu_turn(int device_ordinal);

}  // namespace kt::tune
