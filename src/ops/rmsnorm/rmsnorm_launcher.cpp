// RMSNorm's runtime facet: the call's checks, the parameter block and the launch.
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "ops/rmsnorm/kernels/rmsnorm_params.h"
#include "ops/rmsnorm/rmsnorm_config.hpp"
#include "ops/rmsnorm/rmsnorm_op.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

static_assert(sizeof(RmsnormParams) == 5 * 8 + 8 + 4 + 4, "RmsnormParams layout changed");
static_assert(offsetof(RmsnormParams, rows) == 40 && offsetof(RmsnormParams, eps) == 48,
              "RmsnormParams layout changed");

namespace {

constexpr std::uint32_t kDefaultDynamicSmemLimit = 48 * 1024;

void check_pointer(const void* p, const char* name) {
  if (p == nullptr) throw_invalid(fmt::format("RMSNorm {} is null", name));
  if (!rt::aligned(p, 16))
    throw_invalid(
        fmt::format("RMSNorm {} at {} is not 16-byte aligned (the kernels move 16-byte "
                    "vectors; pass a tensor that starts on 16 bytes)",
                    name, p));
}

// The call's tensors and eps against the problem.
void check_rmsnorm_call(const RmsnormProblem& p, const void* call) {
  const auto& t = *static_cast<const RmsnormTensors*>(call);
  check_pointer(t.x, "x");
  check_pointer(t.weight, "weight");
  check_pointer(t.y, "y");
  if (p.residual) {
    check_pointer(t.residual, "residual");
    check_pointer(t.residual_out, "residual_out");
  } else if (t.residual != nullptr || t.residual_out != nullptr) {
    throw_invalid(
        "RMSNorm residual pointers are set but the problem has no residual add "
        "(set problem.residual)");
  }
  if (!std::isfinite(t.eps) || t.eps < 0)
    throw_invalid(fmt::format("RMSNorm eps must be finite and >= 0, got {}", t.eps));
}

class RmsnormKernel final : public rt::OpKernel {
 public:
  RmsnormKernel(const RmsnormProblem& p, const RmsnormConfig& c, const rt::LoadedModule& module)
      : problem_(p), plan_(plan_launch(p, c)) {
    if (module.functions.empty())
      throw Error(ErrorKind::kInternal, fmt::format("module for {} has no kernel", to_key(c)));
    function_ = module.functions[0];
    if (plan_.smem_bytes > kDefaultDynamicSmemLimit)
      rt::check(
          rt::driver().func_set_attribute(
              function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(plan_.smem_bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }

  CUresult launch(const void* call, CUdeviceptr, CUstream stream) const override {
    const auto& t = *static_cast<const RmsnormTensors*>(call);
    RmsnormParams params{t.x, t.weight, t.residual, t.residual_out, t.y, problem_.rows, t.eps, 0};
    void* args[] = {&params};
    return rt::driver().launch_kernel(function_, plan_.grid[0], plan_.grid[1], plan_.grid[2],
                                      plan_.block[0], plan_.block[1], plan_.block[2],
                                      plan_.smem_bytes, stream, args, nullptr);
  }
  void check_call(const void* call) const override { check_rmsnorm_call(problem_, call); }

 private:
  RmsnormProblem problem_;
  LaunchPlan plan_;
  CUfunction function_ = nullptr;
};

class RmsnormLauncher final : public rt::OpLauncher {
 public:
  std::unique_ptr<rt::OpKernel> load(std::string_view problem_key, std::string_view config_key,
                                     const rt::LoadedModule& module) const override {
    return std::make_unique<RmsnormKernel>(parse_rmsnorm_key(problem_key),
                                           parse_rmsnorm_config_key(config_key), module);
  }

  void check_call(std::string_view problem_key, const void* call) const override {
    check_rmsnorm_call(parse_rmsnorm_key(problem_key), call);
  }
};

}  // namespace

std::shared_ptr<const rt::OpLauncher> make_rmsnorm_launcher() {
  return std::make_shared<RmsnormLauncher>();
}

}  // namespace kt
