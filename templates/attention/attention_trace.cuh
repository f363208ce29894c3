// The fa3 forward's phase trace (`kerntune trace --op attention`): compiled with -DKT_TRACE, stamps
// of each CTA's phases in AttentionParams::trace (layout: AttentionTraceEvent); without the macro
// every function here is empty and the kernel is unchanged.
#pragma once

#include "kerntune/attention/attention_params.h"

namespace kt {
namespace fa3 {

#ifdef KT_TRACE
// This CTA's u64 `slot`, if it is among the traced ones.
__device__ __forceinline__ void trace_store(const AttentionParams& p, int slot,
                                            unsigned long long v) {
  const unsigned int cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (p.trace == nullptr || cta >= unsigned(kAttnTraceMaxCtas)) return;
  p.trace[cta * kAttnTraceEvents + slot] = v;
}

// %globaltimer in slot `event`.
__device__ __forceinline__ void trace_mark(const AttentionParams& p, int event) {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
  trace_store(p, event, now);
}

// The CTA's SM (+ 1) and the SM's %clock64 in kAttnTraceEntryCycles: thread 0 at entry.
__device__ __forceinline__ void trace_entry(const AttentionParams& p) {
  unsigned int smid;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
  trace_store(p, kAttnTraceSmId, smid + 1ull);
  trace_store(p, kAttnTraceEntryCycles, clock64());
  trace_mark(p, kAttnTraceEntry);
}

// The SM's %clock64 in `slot`.
__device__ __forceinline__ void trace_cycles(const AttentionParams& p, int slot) {
  trace_store(p, slot, clock64());
}

// A count in `slot`.
__device__ __forceinline__ void trace_count(const AttentionParams& p, int slot, int n) {
  trace_store(p, slot, static_cast<unsigned long long>(n));
}
#else
__device__ __forceinline__ void trace_mark(const AttentionParams&, int) {}
__device__ __forceinline__ void trace_entry(const AttentionParams&) {}
__device__ __forceinline__ void trace_cycles(const AttentionParams&, int) {}
__device__ __forceinline__ void trace_count(const AttentionParams&, int, int) {}
#endif

}  // namespace fa3
}  // namespace kt
