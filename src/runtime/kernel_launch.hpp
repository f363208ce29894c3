// Launching one loaded kernel by its LaunchPlan through the driver: the steps every op's kernel
// and check kernels share (the opt-in to more than 48 KB of dynamic shared memory, the launch).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>

#include "core/launch_plan.hpp"

namespace kt::rt {

// Lets `function` take `smem_bytes` of dynamic shared memory. NOTE: the driver refuses a launch
// asking for more than 48 KB unless the function has opted in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_
// SHARED_SIZE_BYTES); below that nothing is set. Throws kt::CudaError naming the call.
void allow_dynamic_smem(CUfunction function, std::uint32_t smem_bytes);

// Enqueues `function` on `stream` with `plan`'s grid, block and dynamic shared memory and the
// kernel arguments `args` (cuLaunchKernel: the plan's cluster shape is not applied). Returns
// the driver's result.
CUresult launch_with_plan(CUfunction function, const LaunchPlan& plan, void** args,
                          CUstream stream);

// The plan of a one-dimensional launch of `blocks` CTAs of `threads` threads without dynamic
// shared memory: the check kernels'.
LaunchPlan linear_plan(std::uint32_t blocks, std::uint32_t threads);

// The current context's device's SMs.
int current_device_sms();

// The CTAs of `function` (`threads` each, `dynamic_smem_bytes` of dynamic shared memory) the
// current device holds at once: its SMs times the driver's occupancy answer, at least one an SM.
std::int64_t resident_ctas(CUfunction function, int threads, int dynamic_smem_bytes);

// Enqueues `function` on `stream` as linear_plan(blocks, threads) with the kernel arguments
// `args`: a check kernel's launch. Throws kt::CudaError naming the call
// "cuLaunchKernel(<what>)".
void launch_linear(CUfunction function, std::uint32_t blocks, std::uint32_t threads, void** args,
                   CUstream stream, std::string_view what);

}  // namespace kt::rt
