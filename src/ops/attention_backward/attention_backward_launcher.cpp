// Attention backward's runtime facet: a loaded AttentionBackwardKernel behind OpKernel (the call
// struct is AttentionBackwardTensors; the runtime's workspace holds the FP32 dQ accumulator, D,
// lse_log2 and the deterministic mode's semaphores), the call's checks, and fa2 for the calls an
// fa3 kernel's TMA maps cannot address.
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
  bool serves(const void* call) const override {
    return kernel_.serves(*static_cast<const AttentionBackwardTensors*>(call));
  }
  void check_call(const void* call) const override {
    check_attention_backward_call(kernel_.problem(),
                                  *static_cast<const AttentionBackwardTensors*>(call));
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
  // fa2 addresses every call check_attention_backward_call accepts; the model's best of it.
  std::string fallback_config(std::string_view problem_key,
                              const DeviceDesc& device) const override {
    const AttentionBackwardProblem p = parse_attention_backward_key(problem_key);
    AttentionBackwardDomains fa2_only;
    fa2_only.families = {AttentionFamily::kSm80};
    std::string best;
    double best_us = 0;
    for (const AttentionBackwardConfig& c :
         enumerate_attention_backward_configs(p, device, fa2_only)) {
      const double us = estimate(p, c, device).predicted_us;
      if (best.empty() || us < best_us) {
        best = to_key(c);
        best_us = us;
      }
    }
    return best;
  }
};

}  // namespace

std::shared_ptr<const rt::OpLauncher> make_attention_backward_launcher() {
  return std::make_shared<AttentionBackwardLauncher>();
}

}  // namespace kt
