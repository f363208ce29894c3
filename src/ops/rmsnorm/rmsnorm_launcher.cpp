// RMSNorm's runtime facet: the call's checks, the parameter block and the launch.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "core/occupancy.hpp"
#include "ops/rmsnorm/kernels/rmsnorm_params.h"
#include "ops/rmsnorm/rmsnorm_config.hpp"
#include "ops/rmsnorm/rmsnorm_op.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
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

// The CTAs of `function` the current device holds at once: its SMs times the CTAs an SM holds
// with the registers and static shared memory the compiled kernel uses (at least one). NOTE: the
// occupancy formula the model uses (core/occupancy.hpp) over the kernel's real registers: the
// driver's occupancy query is not among the entry points runtime/cuda_driver.hpp resolves.
std::int64_t resident_ctas(CUfunction function, int threads, int dynamic_smem_bytes) {
  const rt::CudaDriver& d = rt::driver();
  int regs = 0, static_smem_bytes = 0;
  rt::check(d.func_get_attribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, function),
            "cuFuncGetAttribute(NUM_REGS)");
  rt::check(d.func_get_attribute(&static_smem_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
            "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  const DeviceDesc device = rt::query_current_device();
  const Occupancy occ = occupancy(threads, regs, static_smem_bytes + dynamic_smem_bytes, device);
  return std::int64_t(device.num_sms) * std::max(1, occ.ctas_per_sm);
}

class RmsnormKernel final : public rt::OpKernel {
 public:
  RmsnormKernel(const RmsnormProblem& p, const RmsnormConfig& c, const rt::LoadedModule& module)
      : problem_(p) {
    if (module.functions.empty())
      throw Error(ErrorKind::kInternal, fmt::format("module for {} has no kernel", to_key(c)));
    function_ = module.functions[0];
    const int threads = c.threads_per_row * c.rows_per_cta;
    const int dynamic_smem_bytes = rmsnorm_smem_bytes(p, c);
    plan_ =
        plan_launch(p, c, c.persistent ? resident_ctas(function_, threads, dynamic_smem_bytes) : 0);
    rt::allow_dynamic_smem(function_, plan_.smem_bytes);
  }

  CUresult launch(const void* call, CUdeviceptr, CUstream stream) const override {
    const auto& t = *static_cast<const RmsnormTensors*>(call);
    RmsnormParams params{t.x, t.weight, t.residual, t.residual_out, t.y, problem_.rows, t.eps, 0};
    void* args[] = {&params};
    return rt::launch_with_plan(function_, plan_, args, stream);
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
