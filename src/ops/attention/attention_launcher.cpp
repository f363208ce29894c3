// Attention forward's runtime facet: a loaded AttentionKernel behind OpKernel, and the call's
// checks.
#include "core/attention_config.hpp"
#include "ops/attention/attention_call_check.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/attention/attention_op.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

namespace {

class AttentionOpKernel final : public rt::OpKernel {
 public:
  AttentionOpKernel(const AttentionProblem& p, const AttentionConfig& c,
                    const rt::LoadedModule& module)
      : kernel_(p, c, module) {}
  CUresult launch(const void* call, CUdeviceptr workspace, CUstream stream) const override {
    return kernel_.launch(*static_cast<const AttentionTensors*>(call), workspace, stream);
  }
  bool serves(const void* call) const override {
    return kernel_.serves(*static_cast<const AttentionTensors*>(call));
  }
  void check_call(const void* call) const override {
    check_attention_call(kernel_.problem(), *static_cast<const AttentionTensors*>(call));
  }

 private:
  rt::AttentionKernel kernel_;
};

class AttentionLauncher final : public rt::OpLauncher {
 public:
  std::unique_ptr<rt::OpKernel> load(std::string_view problem_key, std::string_view config_key,
                                     const rt::LoadedModule& module) const override {
    return std::make_unique<AttentionOpKernel>(parse_attention_key(problem_key),
                                               parse_attention_config_key(config_key), module);
  }
  void check_call(std::string_view problem_key, const void* call) const override {
    check_attention_call(parse_attention_key(problem_key),
                         *static_cast<const AttentionTensors*>(call));
  }
  // fa2 addresses every call check_attention_call accepts; its model's best config.
  std::string fallback_config(std::string_view problem_key,
                              const DeviceDesc& device) const override {
    const AttentionProblem p = parse_attention_key(problem_key);
    AttentionDomains fa2_only;
    fa2_only.families = {AttentionFamily::kSm80};
    const auto ranked = rank_by_model(p, enumerate_attention_configs(p, device, fa2_only), device);
    return ranked.empty() ? std::string() : to_key(ranked.front().config);
  }
};

}  // namespace

std::shared_ptr<const rt::OpLauncher> make_attention_launcher() {
  return std::make_shared<AttentionLauncher>();
}

}  // namespace kt
