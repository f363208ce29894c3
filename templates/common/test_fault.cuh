// Deliberately broken behaviour for the tuner's fault-injection tests. Compiled in only when the
// tuner's test-only fault option prepends `#define KT_TEST_FAULT <n>` to a candidate's source
// (src/tuner/test_faults.hpp); otherwise kt::test_fault is an empty inline function.
#pragma once

namespace kt {

// Called first thing by every tunable kernel with its output pointer; true means "return now
// without writing" (the wrong-result fault).
__device__ __forceinline__ bool test_fault(void* out) {
#if defined(KT_TEST_FAULT) && KT_TEST_FAULT == 1
  // A store 1 TiB past the output: far outside any allocation, an illegal address.
  static_cast<volatile char*>(out)[1ll << 40] = 1;
#elif defined(KT_TEST_FAULT) && KT_TEST_FAULT == 2
  asm volatile("trap;");
#elif defined(KT_TEST_FAULT) && KT_TEST_FAULT == 3
  // A loop on a constant condition is deleted by ptxas; one on the 64-bit clock, which it can
  // neither predict nor hoist, spins for good (the clock is never 0 once a kernel runs).
  unsigned long long clock = 1;
  do {
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(clock));
  } while (clock != 0);
#elif defined(KT_TEST_FAULT) && KT_TEST_FAULT == 4
  return true;
#endif
  (void)out;
  return false;
}

}  // namespace kt
