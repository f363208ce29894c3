// What `kerntune bench` and `kerntune trace` report for any op: the rows an op's tuning facet
// (tuner/op_tuning.hpp) fills, and the same-bytes copy every memory-bound figure is held to.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/device_desc.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/output_check.hpp"

namespace kt::tune {

struct OpBenchOptions {
  int rounds = 5;  // interleaved rounds (kerntune, baseline, copy, kerntune, ...)
  int reps_per_round = 10;
  std::uint64_t seed = 0;  // 0: fresh
  bool baseline = true;    // run the op's library baseline beside, where it has one here
};

// The runtime's dispatched kernel beside the op's library baseline and a copy, on the same
// fresh random inputs, both checked, timed interleaved in one process.
struct OpBenchRow {
  DispatchInfo dispatch;
  Timing kerntune;
  OutputCheck check;
  std::string baseline_name;  // "cuBLASLt"; empty when the op has no baseline in C++
  Timing baseline;            // num_reps == 0 when none ran
  OutputCheck baseline_check;
  std::string baseline_error;   // why the baseline did not run
  std::string baseline_detail;  // which kernel the library chose, when it says
  // A device-to-device copy moving the problem's min_bytes (half read, half written), timed by
  // the same protocol: the bandwidth a memory-bound problem is held to.
  Timing copy;
  double ratio() const;    // baseline time / kerntune time (> 1: kerntune is faster); 0: none
  double of_copy() const;  // copy time / kerntune time: the fraction of copy bandwidth reached
};

// What an op's `kerntune bench` harness sets up on the current GPU before its workload, in this
// order: a stream of its own, the device's description, a module cache (check kernels, the L2
// flush) and the workload's seed (options.seed, else a fresh one from the clock). Throws
// kt::Error without a GPU.
struct OpBenchSetup {
  explicit OpBenchSetup(const OpBenchOptions& options);
  rt::OwnedStream stream;
  DeviceDesc device;
  rt::ModuleCache modules;
  std::uint64_t seed = 0;
};

// The copy an OpBenchRow's `copy` times: `min_bytes` split into a read half and a written half,
// rounded up to whole 16-byte words (never empty).
class SameBytesCopy {
 public:
  SameBytesCopy(double min_bytes, CUstream stream);
  CUresult launch(CUstream stream) const;

 private:
  std::size_t bytes_;
  rt::DeviceBuffer src_, dst_;
};

// Host-side cost of the runtime's launch on a dispatch hit versus a raw launch of the same
// kernel with a prebuilt parameter block: medians over batches, microseconds per call.
struct DispatchOverhead {
  double runtime_us = 0;
  double raw_launch_us = 0;
  double overhead_us() const { return runtime_us - raw_launch_us; }
  std::string config_key;
};

// One launch's phases across its CTAs, from the template's %globaltimer marks (`kerntune trace`).
struct KernelTracePhase {  // one phase over the CTAs that stamped it, us after the first entry
  std::string name;
  int ctas = 0;
  double min_us = 0, p10_us = 0, median_us = 0, p90_us = 0, max_us = 0;
};

// One traced CTA: its SM and its phases, microseconds from the earliest CTA's entry, in
// KernelTrace::event_labels order (negative where the CTA stamped none).
struct KernelTraceCta {
  int cta = 0;
  int sm = -1;
  std::vector<double> us;
  double sm_mhz = -1;  // its SM's clock from entry to main loop done (negative: not stamped)
  int units = -1;      // the tiles (units) it worked, where the op stamps them (else negative)
};

struct KernelTrace {
  int grid = 0;  // CTAs launched (at most the first 256 are traced)
  bool check_passed = false;
  std::string check_detail;
  double median_us = 0;  // event-timed launch, flush before each (Bench)
  double min_us = 0;
  std::vector<KernelTracePhase> phases;  // in event order; phases no CTA stamped are absent
  // The SMs' clocks from entry to main loop done over the CTAs (MHz: %clock64 cycles over
  // %globaltimer ns); zero where no CTA stamped both. Compute-bound kernels run below the
  // nominal clock when the GPU holds its power limit.
  double sm_mhz_p10 = 0, sm_mhz_median = 0, sm_mhz_p90 = 0;
  std::vector<std::string> event_labels;  // every timed event's short name, stamped or not
  std::vector<KernelTraceCta> ctas;       // the traced CTAs, in blockIdx order
};

}  // namespace kt::tune
