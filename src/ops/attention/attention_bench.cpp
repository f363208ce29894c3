// Attention benchmark through the runtime.
#include "ops/attention/attention_bench.hpp"

#include "ops/attention/attention_workload.hpp"

namespace kt::tune {

OpBenchRow bench_attention(Runtime& runtime, const AttentionProblem& p,
                           const OpBenchOptions& options) {
  OpBenchRow row;
  row.dispatch = runtime.prepare_attention(p, true);
  row.baseline_error =
      "SDPA's FlashAttention-2 and cuDNN backends run beside kerntune from Python: "
      "python3 python/bench_attention.py";
  OpBenchSetup setup(options);
  const CUstream stream = setup.stream.get();
  AttentionWorkload work(p, setup.device, nullptr, setup.modules, stream, setup.seed);
  const AttentionTensors tensors = work.tensors(true);
  work.poison_output();
  runtime.attention_forward(p, tensors, stream);
  row.check = work.check_output(true);
  Bench bench(stream, setup.device, setup.modules, nullptr);
  BenchmarkOptions o;
  o.min_reps = options.rounds * options.reps_per_round;
  row.kerntune = bench.measure(
      [&](CUstream s) {
        runtime.attention_forward(p, tensors, s);
        return CUDA_SUCCESS;
      },
      o);
  return row;
}

}  // namespace kt::tune
