// `kerntune trace --op attention`: where the time of one fa3 forward launch goes, CTA by CTA.
// The config is compiled with -DKT_TRACE (the template's phase marks,
// templates/attention/attention_trace.cuh), checked on fresh random data, timed with the
// measuring protocol, and the last launch's per-CTA %globaltimer stamps and SM ids are read back
// and summarized per phase (a persistent CTA's phases are its first tile's).
#pragma once

#include "core/attention_config.hpp"
#include "core/attention_problem.hpp"
#include "tuner/op_bench.hpp"

namespace kt::tune {

// Throws kt::Error (invalid argument) naming the config unless it is of the fa3 family, the one
// whose template carries phase marks; no device work (`kerntune trace` checks every config first).
void require_phase_marks(const AttentionConfig& config);

// Needs a current CUDA context on an sm_90a device and an fa3 config that validates for
// `problem`; throws kt::Error naming what is wrong otherwise.
KernelTrace trace_attention(const AttentionProblem& problem, const AttentionConfig& config,
                            int reps);

}  // namespace kt::tune
