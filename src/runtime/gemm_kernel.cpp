// Launching a GEMM kernel through the driver.
#include "runtime/gemm_kernel.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "core/error.hpp"
#include "runtime/cuda_driver.hpp"

namespace kt::rt {

static_assert(sizeof(GemmParams) == 4 * 8 + 3 * 8 + 8 * 4, "GemmParams layout changed");
static_assert(sizeof(SplitKReduceParams) == 8 + 8 + 8 + 4 * 4, "SplitKReduceParams layout changed");

namespace {
constexpr std::uint32_t kDefaultDynamicSmemLimit = 48 * 1024;
}

GemmKernel::GemmKernel(const GemmProblem& problem, const GemmConfig& config,
                       const LoadedModule& module)
    : problem_(problem), config_(config), plan_(plan_launch(problem, config)) {
  const std::size_t needed = plan_.reduce ? 2 : 1;
  if (module.functions.size() < needed)
    throw Error(ErrorKind::kInternal,
                fmt::format("module for {} has {} kernels, expected {}", to_key(config),
                            module.functions.size(), needed));
  main_ = module.functions[0];
  if (plan_.reduce) reduce_ = module.functions[1];
  if (plan_.main.smem_bytes > kDefaultDynamicSmemLimit)
    check(driver().func_set_attribute(main_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      int(plan_.main.smem_bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

GemmParams GemmKernel::make_params(const void* a, const void* b, void* c, void* workspace) const {
  GemmParams params{};
  params.a = a;
  params.b = b;
  params.c = c;
  params.workspace = static_cast<float*>(workspace);
  params.lda = problem_.k;
  params.ldb = problem_.layout == Layout::kNT ? problem_.k : problem_.n;
  params.ldc = problem_.n;
  params.m = int(problem_.m);
  params.n = int(problem_.n);
  params.k = int(problem_.k);
  params.k_per_split = int(k_per_split(problem_, config_));
  params.raster_group = config_.raster_group;
  params.tiles_m = int(tiles_m(problem_, config_));
  params.tiles_n = int(tiles_n(problem_, config_));
  return params;
}

CUresult GemmKernel::launch(const void* a, const void* b, void* c, void* workspace,
                            CUstream stream) const {
  const CudaDriver& d = driver();
  GemmParams params = make_params(a, b, c, workspace);
  void* args[] = {&params};
  const LaunchPlan& m = plan_.main;
  CUresult r = d.launch_kernel(main_, m.grid[0], m.grid[1], m.grid[2], m.block[0], m.block[1],
                               m.block[2], m.smem_bytes, stream, args, nullptr);
  if (r != CUDA_SUCCESS || !plan_.reduce) return r;
  SplitKReduceParams reduce{};
  reduce.workspace = static_cast<const float*>(workspace);
  reduce.c = c;
  reduce.ldc = problem_.n;
  reduce.m = int(problem_.m);
  reduce.n = int(problem_.n);
  reduce.splits = config_.split_k;
  void* reduce_args[] = {&reduce};
  const LaunchPlan& rp = *plan_.reduce;
  return d.launch_kernel(reduce_, rp.grid[0], rp.grid[1], rp.grid[2], rp.block[0], rp.block[1],
                         rp.block[2], rp.smem_bytes, stream, reduce_args, nullptr);
}

}  // namespace kt::rt
