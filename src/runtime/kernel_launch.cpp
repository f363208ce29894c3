// Launching one loaded kernel by its LaunchPlan (kernel_launch.hpp).
#include "runtime/kernel_launch.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/cuda_driver.hpp"

namespace kt::rt {

namespace {

constexpr std::uint32_t kDefaultDynamicSmemLimit = 48 * 1024;

}  // namespace

void allow_dynamic_smem(CUfunction function, std::uint32_t smem_bytes) {
  if (smem_bytes > kDefaultDynamicSmemLimit)
    check(driver().func_set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      int(smem_bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

CUresult launch_with_plan(CUfunction function, const LaunchPlan& plan, void** args,
                          CUstream stream) {
  return driver().launch_kernel(function, plan.grid[0], plan.grid[1], plan.grid[2], plan.block[0],
                                plan.block[1], plan.block[2], plan.smem_bytes, stream, args,
                                nullptr);
}

LaunchPlan linear_plan(std::uint32_t blocks, std::uint32_t threads) {
  LaunchPlan plan;
  plan.grid = {blocks, 1, 1};
  plan.block = {threads, 1, 1};
  return plan;
}

int current_device_sms() {
  const CudaDriver& d = driver();
  CUdevice device = 0;
  check(d.ctx_get_device(&device), "cuCtxGetDevice");
  int sms = 0;
  check(d.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
        "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  return sms;
}

std::int64_t resident_ctas(CUfunction function, int threads, int dynamic_smem_bytes) {
  int per_sm = 0;
  check(driver().occupancy_max_active_blocks(&per_sm, function, threads,
                                             std::size_t(dynamic_smem_bytes)),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return std::int64_t(current_device_sms()) * std::max(1, per_sm);
}

void launch_linear(CUfunction function, std::uint32_t blocks, std::uint32_t threads, void** args,
                   CUstream stream, std::string_view what) {
  const CUresult result = launch_with_plan(function, linear_plan(blocks, threads), args, stream);
  if (result != CUDA_SUCCESS) check(result, fmt::format("cuLaunchKernel({})", what).c_str());
}

}  // namespace kt::rt
