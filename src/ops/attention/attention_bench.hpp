// `kerntune bench --op attention`: the kernel the runtime dispatches, verified and timed with the
// measuring protocol. The library baselines (SDPA's FlashAttention-2 and cuDNN backends) run
// beside it from Python in one process: python/bench_attention.py.
#pragma once

#include "kerntune/kerntune.hpp"
#include "ops/attention/attention_workload.hpp"
#include "tuner/benchmark.hpp"

namespace kt::tune {

struct AttentionBenchRow {
  AttentionProblem problem;
  DispatchInfo dispatch;
  Timing timing;
  OutputCheck check;
  double tflops() const;
};

AttentionBenchRow bench_attention(Runtime& runtime, const AttentionProblem& problem, int reps);

}  // namespace kt::tune
