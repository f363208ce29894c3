// Attention forward's tuner facet: the workload behind BenchTarget, and a search that measures
// every valid config of the (small) space, both families on sm_90a, so fa3 is measured whatever
// the model prefers.
#include <map>
#include <string_view>

#include "core/attention_config.hpp"
#include "ops/attention/attention_bench.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/attention/attention_op.hpp"
#include "ops/attention/attention_trace.hpp"
#include "ops/attention/attention_workload.hpp"
#include "tuner/op_tuning.hpp"

namespace kt {

namespace {

class AttentionTarget final : public tune::BenchTarget {
 public:
  explicit AttentionTarget(const tune::BenchTargetArgs& a)
      : problem_(parse_attention_key(a.problem_key)),
        modules_(*a.modules),
        work_(problem_, a.device, a.db, *a.modules, a.stream, a.seed),
        tensors_(work_.tensors(false)) {}

  void load(const std::string& config_key, const cache::CubinRecord& cubin) override {
    if (kernels_.count(config_key)) return;
    const rt::AttentionKernel& kernel = kernels_[config_key] =
        rt::AttentionKernel(problem_, parse_attention_config_key(config_key), modules_.load(cubin));
    // Split-KV partials: one buffer, as large as the largest candidate's (before any timing).
    if (std::size_t(kernel.workspace_bytes()) > workspace_.bytes())
      workspace_ = rt::DeviceBuffer(std::size_t(kernel.workspace_bytes()));
  }
  // One operand set: attention's operands are not rotated (their placement moves a
  // compute-bound kernel's time by little).
  CUresult launch(const std::string& config_key, CUstream s, int) override {
    return kernels_.at(config_key).launch(tensors_, workspace_.get(), s);
  }
  int num_operand_sets() const override { return 1; }
  void poison_output() override { work_.poison_output(); }
  tune::OutputCheck check_output() override { return work_.check_output(false); }

 private:
  AttentionProblem problem_;
  rt::ModuleCache& modules_;
  tune::AttentionWorkload work_;
  AttentionTensors tensors_;
  std::map<std::string, rt::AttentionKernel> kernels_;
  rt::DeviceBuffer workspace_;
};

// The whole space is measured.
class AttentionTuning final : public tune::WholeSpaceTuning {
 public:
  std::unique_ptr<tune::BenchTarget> make_bench_target(
      const tune::BenchTargetArgs& args) const override {
    return std::make_unique<AttentionTarget>(args);
  }
  tune::OpBenchRow bench(Runtime& runtime, std::string_view problem_key,
                         const tune::OpBenchOptions& options) const override {
    return tune::bench_attention(runtime, parse_attention_key(problem_key), options);
  }
  void check_traceable(std::string_view, std::string_view config_key) const override {
    tune::require_phase_marks(parse_attention_config_key(config_key));
  }
  tune::KernelTrace trace(std::string_view problem_key, std::string_view config_key,
                          int reps) const override {
    return tune::trace_attention(parse_attention_key(problem_key),
                                 parse_attention_config_key(config_key), reps);
  }
};

}  // namespace

std::shared_ptr<const tune::OpTuning> make_attention_tuning() {
  return std::make_shared<AttentionTuning>();
}

}  // namespace kt
