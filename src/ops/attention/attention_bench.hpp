// `kerntune bench --op attention`: the kernel the runtime dispatches, verified and timed with the
// measuring protocol. The library baselines (SDPA's FlashAttention-2 and cuDNN backends) run
// beside it from Python in one process: python/bench_attention.py.
#pragma once

#include "kerntune/kerntune.hpp"
#include "tuner/op_bench.hpp"

namespace kt::tune {

OpBenchRow bench_attention(Runtime& runtime, const AttentionProblem& problem,
                           const OpBenchOptions& options);

}  // namespace kt::tune
