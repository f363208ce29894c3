// The CUDA Driver API, loaded with dlopen: a binary that links libcuda does not even start on
// a machine without a driver, and kerntune must (it predicts instead). cuda.h gives types only;
// every entry point is resolved through cuGetProcAddress for the header's CUDA version.
#pragma once

#include <cuda.h>

#include <string>

namespace kt::rt {

struct CudaDriver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceTotalMem) device_total_mem = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxPushCurrent) ctx_push_current = nullptr;
  decltype(&::cuCtxPopCurrent) ctx_pop_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuLaunchKernelEx) launch_kernel_ex = nullptr;  // cluster launches
  decltype(&::cuOccupancyMaxActiveClusters) occupancy_max_active_clusters = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy_max_active_blocks = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensor_map_encode_tiled = nullptr;
  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemGetInfo) mem_get_info = nullptr;
  decltype(&::cuMemcpyHtoD) memcpy_htod = nullptr;
  decltype(&::cuMemcpyDtoH) memcpy_dtoh = nullptr;
  decltype(&::cuMemsetD8Async) memset_d8_async = nullptr;
  decltype(&::cuMemcpyDtoDAsync) memcpy_dtod_async = nullptr;
  decltype(&::cuMemHostAlloc) mem_host_alloc = nullptr;
  decltype(&::cuMemFreeHost) mem_free_host = nullptr;
  decltype(&::cuMemHostGetDevicePointer) mem_host_get_device_pointer = nullptr;
  decltype(&::cuStreamWaitValue32) stream_wait_value32 = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuStreamIsCapturing) stream_is_capturing = nullptr;
  decltype(&::cuStreamBeginCapture) stream_begin_capture = nullptr;
  decltype(&::cuStreamEndCapture) stream_end_capture = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) graph_instantiate = nullptr;
  decltype(&::cuGraphLaunch) graph_launch = nullptr;
  decltype(&::cuGraphExecDestroy) graph_exec_destroy = nullptr;
  decltype(&::cuGraphDestroy) graph_destroy = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;
  std::string path;
};

// The driver, loaded and cuInit()ed once per process. Throws kt::Error (kNotFound) naming the
// library and the reason when there is no usable driver.
const CudaDriver& driver();

// True when driver() would succeed and at least one device is present; never throws.
bool gpu_available(std::string* reason = nullptr);

// Throws CudaError naming `call` when `result` is not CUDA_SUCCESS.
void check(CUresult result, const char* call);

}  // namespace kt::rt
