// Attention benchmark through the runtime.
#include "ops/attention/attention_bench.hpp"

#include <chrono>

#include "ops/attention/attention_workload.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"

namespace kt::tune {

OpBenchRow bench_attention(Runtime& runtime, const AttentionProblem& p,
                           const OpBenchOptions& options) {
  OpBenchRow row;
  row.dispatch = runtime.prepare_attention(p, true);
  row.baseline_error =
      "SDPA's FlashAttention-2 and cuDNN backends run beside kerntune from Python: "
      "python3 python/bench_attention.py";
  rt::OwnedStream owned_stream;
  const CUstream stream = owned_stream.get();
  const DeviceDesc desc = rt::query_current_device();
  rt::ModuleCache modules;
  const std::uint64_t seed =
      options.seed != 0
          ? options.seed
          : std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  AttentionWorkload work(p, desc, nullptr, modules, stream, seed);
  const AttentionTensors tensors = work.tensors(true);
  work.poison_output();
  runtime.attention_forward(p, tensors, stream);
  row.check = work.check_output(true);
  Bench bench(stream, desc, modules, nullptr);
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
