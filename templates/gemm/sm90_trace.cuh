// The sm90 GEMM's phase trace (`kerntune trace`): compiled with -DKT_TRACE, stamps of each CTA's
// phases in the last bytes of the flag region; without the macro every function here is empty.
#pragma once

#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_flags.cuh"

namespace kt {
namespace sm90 {

// Compiled with -DKT_TRACE (never by the tuner or the runtime), one thread per role stamps
// %globaltimer (ns) at each phase of the CTA's first unit (trace_mark), the CTA's SM
// (trace_sm_id) and the SM's cycle counter (trace_cycles). Without the macro the three are empty
// and the kernel is unchanged.
#ifdef KT_TRACE
// The traced CTA's u64 `slot` of the trace region (layout: GemmTraceEvent in gemm_params.h).
__device__ __forceinline__ void trace_store(unsigned int* flags, int slot, unsigned long long v) {
  if (flags == nullptr || blockIdx.x >= kGemmTraceMaxCtas) return;
  reinterpret_cast<unsigned long long*>(
      flags + kFlagRegionWords - kGemmTraceBytes / 4)[blockIdx.x * kGemmTraceEvents + slot] = v;
}

// %globaltimer in slot `event`.
__device__ __forceinline__ void trace_mark(unsigned int* flags, int event) {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
  trace_store(flags, event, now);
}

// The traced CTA's SM (`kerntune trace --per-cta`: where the launch placed each CTA), in the
// kTraceSmId slot as %smid + 1.
__device__ __forceinline__ void trace_sm_id(unsigned int* flags) {
  unsigned int smid;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
  trace_store(flags, kTraceSmId, smid + 1ull);
}

// %clock64 in `slot` (kTraceEntryCycles or kTraceLoopCycles): with the %globaltimer stamps of
// the same moments, the clock the SM ran at.
__device__ __forceinline__ void trace_cycles(unsigned int* flags, int slot) {
  unsigned long long cycles;
  asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(cycles));
  trace_store(flags, slot, cycles);
}
#else
__device__ __forceinline__ void trace_mark(unsigned int*, int) {}
__device__ __forceinline__ void trace_sm_id(unsigned int*) {}
__device__ __forceinline__ void trace_cycles(unsigned int*, int) {}
#endif

}  // namespace sm90
}  // namespace kt
