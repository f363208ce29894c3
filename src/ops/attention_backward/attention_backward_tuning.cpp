// Attention backward's tuner facet: the workload behind BenchTarget (the kernel on the
// workload's own workspace), a search that measures every valid config of the (small) space,
// and `kerntune bench` through the runtime.
#include <map>

#include "ops/attention_backward/attention_backward_kernel.hpp"
#include "ops/attention_backward/attention_backward_op.hpp"
#include "ops/attention_backward/attention_backward_workload.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/op_tuning.hpp"

namespace kt {

namespace {

class AttentionBackwardTarget final : public tune::BenchTarget {
 public:
  explicit AttentionBackwardTarget(const tune::BenchTargetArgs& a)
      : problem_(parse_attention_backward_key(a.problem_key)),
        modules_(*a.modules),
        work_(problem_, a.device, a.db, *a.modules, a.stream, a.seed) {}

  void load(const std::string& config_key, const cache::CubinRecord& cubin) override {
    if (kernels_.count(config_key)) return;
    kernels_.emplace(config_key, rt::AttentionBackwardKernel(
                                     problem_, parse_attention_backward_config_key(config_key),
                                     modules_.load(cubin)));
  }
  // One operand set, as the forward's.
  CUresult launch(const std::string& config_key, CUstream s, int) override {
    return kernels_.at(config_key).launch(work_.tensors(), work_.workspace(), s);
  }
  int num_operand_sets() const override { return 1; }
  void poison_output() override { work_.poison_output(); }
  tune::OutputCheck check_output() override { return work_.check_output(); }

 private:
  AttentionBackwardProblem problem_;
  rt::ModuleCache& modules_;
  tune::AttentionBackwardWorkload work_;
  std::map<std::string, rt::AttentionBackwardKernel> kernels_;
};

// The runtime's dispatched kernel on the workload's inputs, verified, then timed with Bench.
tune::OpBenchRow bench_attention_backward(Runtime& runtime, const AttentionBackwardProblem& p,
                                          const tune::OpBenchOptions& options) {
  tune::OpBenchRow row;
  const std::string key = to_key(p);
  row.dispatch = runtime.prepare(key);
  row.baseline_error =
      "SDPA's FlashAttention-2 and cuDNN backward run beside kerntune from Python (not yet: "
      "the Python binding of attention backward is to come)";
  tune::OpBenchSetup setup(options);
  const CUstream stream = setup.stream.get();
  tune::AttentionBackwardWorkload work(p, setup.device, nullptr, setup.modules, stream, setup.seed);
  const AttentionBackwardTensors& tensors = work.tensors();
  work.poison_output();
  runtime.launch(key, "", &tensors, stream);
  row.check = work.check_output();
  tune::Bench bench(stream, setup.device, setup.modules, nullptr);
  tune::BenchmarkOptions o;
  o.min_reps = options.rounds * options.reps_per_round;
  row.kerntune = bench.measure(
      [&](CUstream s) {
        runtime.launch(key, "", &tensors, s);
        return CUDA_SUCCESS;
      },
      o);
  return row;
}

// The whole space is measured (at most 23 configs, 18 fa2 and 5 fa3): small enough that a tune
// never depends on the model, which only orders it (and serves untuned shapes).
class AttentionBackwardTuning final : public tune::WholeSpaceTuning {
 public:
  std::unique_ptr<tune::BenchTarget> make_bench_target(
      const tune::BenchTargetArgs& args) const override {
    return std::make_unique<AttentionBackwardTarget>(args);
  }
  tune::OpBenchRow bench(Runtime& runtime, std::string_view problem_key,
                         const tune::OpBenchOptions& options) const override {
    return bench_attention_backward(runtime, parse_attention_backward_key(problem_key), options);
  }
};

}  // namespace

std::shared_ptr<const tune::OpTuning> make_attention_backward_tuning() {
  return std::make_shared<AttentionBackwardTuning>();
}

}  // namespace kt
