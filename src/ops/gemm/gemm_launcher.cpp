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
  // C, where it overlaps A or B.
  std::size_t timing_scratch_bytes(const void* call) const override {
    return c_overlaps_operand(*static_cast<const GemmCall*>(call)) ? c_bytes() : 0;
  }
  std::shared_ptr<const void> timing_call(const void* call, CUdeviceptr scratch,
                                          CUstream) const override {
    auto timing = std::make_shared<GemmCall>(*static_cast<const GemmCall*>(call));
    if (c_overlaps_operand(*timing)) timing->c = reinterpret_cast<void*>(scratch);
    return timing;
  }

 private:
  std::size_t c_bytes() const {
    const GemmProblem& p = kernel_.problem();
    return std::size_t(p.m * p.n) * std::size_t(size_bytes(p.out_dtype));
  }
  bool c_overlaps_operand(const GemmCall& g) const {
    const GemmProblem& p = kernel_.problem();
    const std::size_t in = std::size_t(size_bytes(p.in_dtype));
    return rt::overlaps(g.c, c_bytes(), g.a, std::size_t(p.m * p.k) * in) ||
           rt::overlaps(g.c, c_bytes(), g.b, std::size_t(p.k * p.n) * in);
  }

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
