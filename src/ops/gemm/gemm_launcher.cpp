// GEMM's runtime facet: a loaded GemmKernel behind OpKernel, and the call's checks.
#include "core/gemm_config.hpp"
#include "ops/gemm/gemm_call_check.hpp"
#include "ops/gemm/gemm_kernel.hpp"
#include "ops/gemm/gemm_op.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

namespace {

class GemmOpKernel final : public rt::OpKernel {
 public:
  GemmOpKernel(const GemmProblem& p, const GemmConfig& c, const rt::LoadedModule& module)
      : kernel_(p, c, module) {}
  CUresult launch(const void* call, CUdeviceptr workspace, CUstream stream) const override {
    const auto& g = *static_cast<const GemmCall*>(call);
    return kernel_.launch(g.a, g.b, g.c, reinterpret_cast<void*>(workspace), stream);
  }
  void check_call(const void* call) const override {
    const auto& g = *static_cast<const GemmCall*>(call);
    check_gemm_call(kernel_.problem(), g.a, g.b, g.c);
  }

 private:
  rt::GemmKernel kernel_;
};

class GemmLauncher final : public rt::OpLauncher {
 public:
  std::unique_ptr<rt::OpKernel> load(std::string_view problem_key, std::string_view config_key,
                                     const rt::LoadedModule& module) const override {
    return std::make_unique<GemmOpKernel>(parse_gemm_key(problem_key),
                                          parse_gemm_config_key(config_key), module);
  }
  void check_call(std::string_view problem_key, const void* call) const override {
    const auto& g = *static_cast<const GemmCall*>(call);
    check_gemm_call(parse_gemm_key(problem_key), g.a, g.b, g.c);
  }
  void prepare_workspace(CUdeviceptr workspace, std::size_t bytes) const override {
    rt::clear_gemm_workspace_flags(workspace, bytes);
  }
  bool uses_shared_workspace() const override { return true; }
};

}  // namespace

std::shared_ptr<const rt::OpLauncher> make_gemm_launcher() {
  return std::make_shared<GemmLauncher>();
}

}  // namespace kt
