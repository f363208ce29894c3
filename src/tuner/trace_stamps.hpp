// A traced launch (`kerntune trace`): the kernel compiled with -DKT_TRACE checked once, timed
// with the protocol, and its last launch's per-CTA stamps read back into a KernelTrace (each
// CTA's phases in microseconds after the earliest entry, their spread over the CTAs, the SMs'
// clocks). The layout of the stamps is the op's (its params header); this is what every op's
// trace shares.
#pragma once

#include <cuda.h>

#include <functional>

#include "generator/generated_source.hpp"
#include "runtime/cubin_provider.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/op_bench.hpp"
#include "tuner/output_check.hpp"

namespace kt::tune {

// Where a CTA's u64 slots hold what: `events` slots a CTA, the first `timed_events` %globaltimer
// ns (slot 0 the CTA's entry; 0: never stamped), each named in `names` and `labels` (short, for
// the per-CTA table); the CTA's SM + 1 in `sm_id_slot`; %clock64 at entry and at the
// `loop_done_event` stamp in `entry_cycles_slot` and `loop_cycles_slot`; the tiles the CTA
// worked in `units_slot` (negative: not stamped).
struct TraceStampLayout {
  int events = 0;
  int timed_events = 0;
  const char* const* names = nullptr;
  const char* const* labels = nullptr;
  int sm_id_slot = 0;
  int entry_cycles_slot = 0;
  int loop_cycles_slot = 0;
  int loop_done_event = 0;
  int units_slot = -1;
};

// The launch to trace: `grid` CTAs, the stamps of the first `max_ctas` at `stamps` on the device
// ([CTA][layout.events] u64); `poison` and `check` the op's workload's.
struct TracedLaunch {
  std::function<CUresult(CUstream)> launch;
  std::function<void()> poison;
  std::function<OutputCheck()> check;
  int grid = 0;
  int max_ctas = 0;
  CUdeviceptr stamps = 0;
  TraceStampLayout layout;
};

// The cubin of an op's kernel source with its phase marks compiled in (-DKT_TRACE, which the
// templates test), under a name of its own; compiled with no database, so never stored.
rt::CubinResult compile_traced(gen::GeneratedSource source);

// Launches `t` once on poisoned outputs and checks them, then `reps` (at least 1) more with
// `bench` (an L2 flush before each) on `stream`, and reads the last launch's stamps back.
// Throws kt::CudaError naming a failed launch or copy.
KernelTrace run_traced_launch(Bench& bench, CUstream stream, const TracedLaunch& t, int reps);

}  // namespace kt::tune
