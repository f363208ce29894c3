// `kerntune trace`: where the time of one sm90 GEMM launch goes, CTA by CTA. The config is
// compiled with -DKT_TRACE (the template's phase marks, templates/gemm/sm90_trace.cuh), checked
// on fresh random data, timed with the measuring protocol, and the last launch's per-CTA
// %globaltimer stamps and SM ids are read back and summarized per phase.
#pragma once

#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "tuner/op_bench.hpp"

namespace kt::tune {

// Throws kt::Error (invalid argument) naming the config unless it is of the sm90 family, the one
// whose templates carry phase marks; no device work (`kerntune trace` checks every config first).
void require_phase_marks(const GemmConfig& config);

// Needs a current CUDA context on an sm_90a device and an sm90 config that validates for
// `problem`; throws kt::Error naming what is wrong otherwise.
KernelTrace trace_gemm(const GemmProblem& problem, const GemmConfig& config, int reps);

}  // namespace kt::tune
