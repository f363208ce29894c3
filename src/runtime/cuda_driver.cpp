// dlopen()ed CUDA driver.
#include "runtime/cuda_driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "core/env.hpp"
#include "core/error.hpp"

namespace kt::rt {

namespace {

// NOTE: entry points are bound by the exact symbol that cuda.h's macros name (cuMemAlloc ->
// cuMemAlloc_v2, ...), as the linker would. cuGetProcAddress with the header's CUDA version is
// not equivalent: for CUDA 13 it returns cuCtxGetDevice_v2, whose signature differs from the
// cuCtxGetDevice prototype of the same header.
#define KT_SYMBOL_NAME(fn) KT_SYMBOL_NAME_EXPANDED(fn)
#define KT_SYMBOL_NAME_EXPANDED(fn) #fn

template <typename Fn>
void resolve(void* handle, const char* symbol, Fn& fn, const std::string& path) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr)
    throw Error(ErrorKind::kNotFound,
                fmt::format("the CUDA driver {} has no {}: update the driver (this build needs one "
                            "that supports CUDA {}.{})",
                            path, symbol, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10));
}

CudaDriver load() {
  const std::string path = env::cuda_driver_library().value_or("libcuda.so.1");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw Error(ErrorKind::kNotFound,
                fmt::format("no CUDA driver: cannot load {} ({})", path, dlerror()));
  CudaDriver d;
  d.path = path;
#define KT_RESOLVE(fn, member) resolve(handle, KT_SYMBOL_NAME(fn), member, path)
  KT_RESOLVE(cuInit, d.init);
  KT_RESOLVE(cuDriverGetVersion, d.driver_get_version);
  KT_RESOLVE(cuGetErrorName, d.get_error_name);
  KT_RESOLVE(cuGetErrorString, d.get_error_string);
  KT_RESOLVE(cuDeviceGetCount, d.device_get_count);
  KT_RESOLVE(cuDeviceGet, d.device_get);
  KT_RESOLVE(cuDeviceGetName, d.device_get_name);
  KT_RESOLVE(cuDeviceGetAttribute, d.device_get_attribute);
  KT_RESOLVE(cuDeviceTotalMem, d.device_total_mem);
  KT_RESOLVE(cuDevicePrimaryCtxRetain, d.primary_ctx_retain);
  KT_RESOLVE(cuDevicePrimaryCtxRelease, d.primary_ctx_release);
  KT_RESOLVE(cuCtxGetCurrent, d.ctx_get_current);
  KT_RESOLVE(cuCtxSetCurrent, d.ctx_set_current);
  KT_RESOLVE(cuCtxPushCurrent, d.ctx_push_current);
  KT_RESOLVE(cuCtxPopCurrent, d.ctx_pop_current);
  KT_RESOLVE(cuCtxGetDevice, d.ctx_get_device);
  KT_RESOLVE(cuCtxSynchronize, d.ctx_synchronize);
  KT_RESOLVE(cuModuleLoadData, d.module_load_data);
  KT_RESOLVE(cuModuleUnload, d.module_unload);
  KT_RESOLVE(cuModuleGetFunction, d.module_get_function);
  KT_RESOLVE(cuFuncSetAttribute, d.func_set_attribute);
  KT_RESOLVE(cuFuncGetAttribute, d.func_get_attribute);
  KT_RESOLVE(cuLaunchKernel, d.launch_kernel);
  KT_RESOLVE(cuLaunchKernelEx, d.launch_kernel_ex);
  KT_RESOLVE(cuOccupancyMaxActiveClusters, d.occupancy_max_active_clusters);
  KT_RESOLVE(cuOccupancyMaxActiveBlocksPerMultiprocessor, d.occupancy_max_active_blocks);
  KT_RESOLVE(cuTensorMapEncodeTiled, d.tensor_map_encode_tiled);
  KT_RESOLVE(cuMemAlloc, d.mem_alloc);
  KT_RESOLVE(cuMemFree, d.mem_free);
  KT_RESOLVE(cuMemGetInfo, d.mem_get_info);
  KT_RESOLVE(cuMemcpyHtoD, d.memcpy_htod);
  KT_RESOLVE(cuMemcpyDtoH, d.memcpy_dtoh);
  KT_RESOLVE(cuMemsetD8Async, d.memset_d8_async);
  KT_RESOLVE(cuMemcpyDtoDAsync, d.memcpy_dtod_async);
  KT_RESOLVE(cuMemHostAlloc, d.mem_host_alloc);
  KT_RESOLVE(cuMemFreeHost, d.mem_free_host);
  KT_RESOLVE(cuMemHostGetDevicePointer, d.mem_host_get_device_pointer);
  KT_RESOLVE(cuStreamWaitValue32, d.stream_wait_value32);
  KT_RESOLVE(cuStreamCreate, d.stream_create);
  KT_RESOLVE(cuStreamDestroy, d.stream_destroy);
  KT_RESOLVE(cuStreamSynchronize, d.stream_synchronize);
  KT_RESOLVE(cuStreamIsCapturing, d.stream_is_capturing);
  KT_RESOLVE(cuStreamBeginCapture, d.stream_begin_capture);
  KT_RESOLVE(cuStreamEndCapture, d.stream_end_capture);
  KT_RESOLVE(cuGraphInstantiateWithFlags, d.graph_instantiate);
  KT_RESOLVE(cuGraphLaunch, d.graph_launch);
  KT_RESOLVE(cuGraphExecDestroy, d.graph_exec_destroy);
  KT_RESOLVE(cuGraphDestroy, d.graph_destroy);
  KT_RESOLVE(cuEventCreate, d.event_create);
  KT_RESOLVE(cuEventDestroy, d.event_destroy);
  KT_RESOLVE(cuEventRecord, d.event_record);
  KT_RESOLVE(cuEventSynchronize, d.event_synchronize);
  KT_RESOLVE(cuEventElapsedTime, d.event_elapsed_time);
#undef KT_RESOLVE
  const CUresult r = d.init(0);
  if (r != CUDA_SUCCESS) {
    const char* name = "?";
    d.get_error_name(r, &name);
    throw Error(ErrorKind::kNotFound, fmt::format("cuInit failed: {} (no usable GPU)", name));
  }
  return d;
}

}  // namespace

const CudaDriver& driver() {
  static std::once_flag once;
  static CudaDriver instance;
  static std::string failure;
  std::call_once(once, [] {
    try {
      instance = load();
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(ErrorKind::kNotFound, failure);
  return instance;
}

bool gpu_available(std::string* reason) {
  try {
    const CudaDriver& d = driver();
    int count = 0;
    if (d.device_get_count(&count) != CUDA_SUCCESS || count == 0) {
      if (reason) *reason = "the CUDA driver reports no device";
      return false;
    }
    return true;
  } catch (const Error& e) {
    if (reason) *reason = e.what();
    return false;
  }
}

void check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = "CUDA_ERROR_UNKNOWN";
  const char* text = "";
  const CudaDriver& d = driver();
  d.get_error_name(result, &name);
  d.get_error_string(result, &text);
  throw CudaError(call, int(result), fmt::format("{}: {}", name, text));
}

}  // namespace kt::rt
