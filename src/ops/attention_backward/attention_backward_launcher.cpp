// Attention backward's runtime facet: a loaded AttentionBackwardKernel behind OpKernel (the call
// struct is AttentionBackwardTensors; the runtime's workspace holds the FP32 dQ accumulator, D
// and the deterministic mode's semaphores), and the call's checks.
#include "ops/attention_backward/attention_backward_call_check.hpp"
#include "ops/attention_backward/attention_backward_kernel.hpp"
#include "ops/attention_backward/attention_backward_op.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

namespace {

class AttentionBackwardOpKernel final : public rt::OpKernel {
 public:
  AttentionBackwardOpKernel(const AttentionBackwardProblem& p, const AttentionBackwardConfig& c,
                            const rt::LoadedModule& module)
      : kernel_(p, c, module) {}
  CUresult launch(const void* call, CUdeviceptr workspace, CUstream stream) const override {
    return kernel_.launch(*static_cast<const AttentionBackwardTensors*>(call), workspace, stream);
  }

 private:
  rt::AttentionBackwardKernel kernel_;
};

class AttentionBackwardLauncher final : public rt::OpLauncher {
 public:
  std::unique_ptr<rt::OpKernel> load(std::string_view problem_key, std::string_view config_key,
                                     const rt::LoadedModule& module) const override {
    return std::make_unique<AttentionBackwardOpKernel>(
        parse_attention_backward_key(problem_key), parse_attention_backward_config_key(config_key),
        module);
  }
  void check_call(std::string_view problem_key, const void* call) const override {
    check_attention_backward_call(parse_attention_backward_key(problem_key),
                                  *static_cast<const AttentionBackwardTensors*>(call));
  }
};

}  // namespace

std::shared_ptr<const rt::OpLauncher> make_attention_backward_launcher() {
  return std::make_shared<AttentionBackwardLauncher>();
}

}  // namespace kt
