// Attention benchmark through the runtime.
#include "ops/attention/attention_bench.hpp"

#include <chrono>

#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"

namespace kt::tune {

double AttentionBenchRow::tflops() const {
  return timing.median_us > 0 ? problem.flops() / timing.median_us / 1e6 : 0;
}

AttentionBenchRow bench_attention(Runtime& runtime, const AttentionProblem& p, int reps) {
  AttentionBenchRow row;
  row.problem = p;
  row.dispatch = runtime.prepare_attention(p, true);
  rt::OwnedStream owned_stream;
  const CUstream stream = owned_stream.get();
  const DeviceDesc desc = rt::query_current_device();
  rt::ModuleCache modules;
  AttentionWorkload work(
      p, desc, nullptr, modules, stream,
      std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
  const AttentionTensors tensors = work.tensors(true);
  work.poison_output();
  runtime.attention_forward(p, tensors, stream);
  row.check = work.check_output(true);
  Bench bench(stream, desc, modules, nullptr);
  BenchmarkOptions o;
  o.min_reps = reps;
  row.timing = bench.measure(
      [&](CUstream s) {
        runtime.attention_forward(p, tensors, s);
        return CUDA_SUCCESS;
      },
      o);
  return row;
}

}  // namespace kt::tune
