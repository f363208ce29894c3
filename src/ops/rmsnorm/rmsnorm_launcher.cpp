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
#include "runtime/kernel_launch.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {

static_assert(sizeof(RmsnormParams) == 5 * 8 + 8 + 4 + 4, "RmsnormParams layout changed");
static_assert(offsetof(RmsnormParams, rows) == 40 && offsetof(RmsnormParams, eps) == 48,
              "RmsnormParams layout changed");

namespace {

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
      : problem_(p) {
    if (module.functions.empty())
      throw Error(ErrorKind::kInternal, fmt::format("module for {} has no kernel", to_key(c)));
    function_ = module.functions[0];
    // The dynamic shared memory is allowed first: the occupancy query counts it.
    const int dynamic_smem_bytes = rmsnorm_smem_bytes(p, c);
    rt::allow_dynamic_smem(function_, std::uint32_t(dynamic_smem_bytes));
    plan_ = plan_launch(
        p, c,
        c.persistent
            ? rt::resident_ctas(function_, c.threads_per_row * c.rows_per_cta, dynamic_smem_bytes)
            : 0);
  }

  CUresult launch(const void* call, CUdeviceptr, CUstream stream) const override {
    const auto& t = *static_cast<const RmsnormTensors*>(call);
    RmsnormParams params{t.x, t.weight, t.residual, t.residual_out, t.y, problem_.rows, t.eps, 0};
    void* args[] = {&params};
    return rt::launch_with_plan(function_, plan_, args, stream);
  }
  void check_call(const void* call) const override { check_rmsnorm_call(problem_, call); }
  // y, where it overlaps x, the weights or the residual; the sum, where it overlaps one of them,
  // or, written in place over the residual, a copy of the residual to write it over.
  std::size_t timing_scratch_bytes(const void* call) const override {
    const auto& t = *static_cast<const RmsnormTensors*>(call);
    return (overlaps_input(t, t.y) ? tensor_bytes() : 0) +
           (problem_.residual && overlaps_input(t, t.residual_out) ? tensor_bytes() : 0);
  }
  std::shared_ptr<const void> timing_call(const void* call, CUdeviceptr scratch,
                                          CUstream stream) const override {
    auto timing = std::make_shared<RmsnormTensors>(*static_cast<const RmsnormTensors*>(call));
    CUdeviceptr next = scratch;
    if (overlaps_input(*timing, timing->y)) {
      timing->y = reinterpret_cast<void*>(next);
      next += tensor_bytes();
    }
    if (problem_.residual && overlaps_input(*timing, timing->residual_out)) {
      if (timing->residual_out == timing->residual) {
        rt::check(
            rt::driver().memcpy_dtod_async(next, reinterpret_cast<CUdeviceptr>(timing->residual),
                                           tensor_bytes(), stream),
            "cuMemcpyDtoDAsync(rmsnorm timing residual)");
        timing->residual = reinterpret_cast<const void*>(next);
      }
      timing->residual_out = reinterpret_cast<void*>(next);
    }
    return timing;
  }

 private:
  std::size_t tensor_bytes() const {
    return std::size_t(problem_.rows * problem_.hidden) * std::size_t(size_bytes(problem_.dtype));
  }
  // Whether the rows x hidden tensor at `out` shares a byte with x, the weights or the residual.
  bool overlaps_input(const RmsnormTensors& t, const void* out) const {
    const std::size_t weights =
        std::size_t(problem_.hidden) * std::size_t(size_bytes(problem_.dtype));
    return rt::overlaps(out, tensor_bytes(), t.x, tensor_bytes()) ||
           rt::overlaps(out, tensor_bytes(), t.weight, weights) ||
           (problem_.residual && rt::overlaps(out, tensor_bytes(), t.residual, tensor_bytes()));
  }

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
