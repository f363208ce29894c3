// `kerntune trace`: where the time of one sm90 GEMM launch goes, CTA by CTA. The config is
// compiled with -DKT_TRACE (the template's phase marks, templates/gemm/sm90_trace.cuh), checked
// on fresh random data, timed with the measuring protocol, and the last launch's per-CTA
// %globaltimer stamps and SM ids are read back and summarized per phase.
#pragma once

#include <string>
#include <vector>

#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"

namespace kt::tune {

// One phase over the CTAs that stamped it: microseconds from the earliest CTA's entry.
struct GemmTracePhase {
  std::string name;
  int ctas = 0;
  double min_us = 0, p10_us = 0, median_us = 0, p90_us = 0, max_us = 0;
};

// One traced CTA: its SM and its phases, microseconds from the earliest CTA's entry, in
// GemmTrace::event_labels order (negative where the CTA stamped none).
struct GemmTraceCta {
  int cta = 0;
  int sm = -1;
  std::vector<double> us;
  double sm_mhz = -1;  // its SM's clock from entry to main loop done (negative: not stamped)
};

struct GemmTrace {
  int grid = 0;  // CTAs launched (at most the first 256 are traced)
  bool check_passed = false;
  std::string check_detail;
  double median_us = 0;  // event-timed launch, flush before each (Bench)
  double min_us = 0;
  std::vector<GemmTracePhase> phases;  // in TraceEvent order; phases no CTA stamped are absent
  // The SMs' clocks from entry to main loop done over the CTAs (MHz: %clock64 cycles over
  // %globaltimer ns); zero where no CTA stamped both. Compute-bound kernels run below the
  // nominal clock when the GPU holds its power limit.
  double sm_mhz_p10 = 0, sm_mhz_median = 0, sm_mhz_p90 = 0;
  std::vector<std::string> event_labels;  // every timed event's short name, stamped or not
  std::vector<GemmTraceCta> ctas;         // the traced CTAs, in blockIdx order
};

// Needs a current CUDA context on an sm_90a device and an sm90 config that validates for
// `problem`; throws kt::Error naming what is wrong otherwise.
GemmTrace trace_gemm(const GemmProblem& problem, const GemmConfig& config, int reps);

}  // namespace kt::tune
