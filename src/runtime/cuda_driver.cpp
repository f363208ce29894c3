// dlopen()ed CUDA driver.
#include "runtime/cuda_driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "core/env.hpp"
#include "core/error.hpp"

namespace kt::rt {

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

template <typename Fn>
void resolve(GetProcAddress get, const char* symbol, Fn& fn) {
  void* pointer = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult r = get(symbol, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (r != CUDA_SUCCESS || pointer == nullptr)
    throw Error(ErrorKind::kNotFound,
                fmt::format("the CUDA driver has no {} for CUDA {}.{}: update the driver (this "
                            "build needs one that supports CUDA {}.{})",
                            symbol, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
                            CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10));
  fn = reinterpret_cast<Fn>(pointer);
}

CudaDriver load() {
  const std::string path = env::cuda_driver_library().value_or("libcuda.so.1");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw Error(ErrorKind::kNotFound,
                fmt::format("no CUDA driver: cannot load {} ({})", path, dlerror()));
  auto get = reinterpret_cast<GetProcAddress>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get == nullptr)
    throw Error(ErrorKind::kNotFound,
                fmt::format("{} has no cuGetProcAddress_v2: the driver is older than CUDA 12", path));
  CudaDriver d;
  d.path = path;
  resolve(get, "cuInit", d.init);
  resolve(get, "cuDriverGetVersion", d.driver_get_version);
  resolve(get, "cuGetErrorName", d.get_error_name);
  resolve(get, "cuGetErrorString", d.get_error_string);
  resolve(get, "cuDeviceGetCount", d.device_get_count);
  resolve(get, "cuDeviceGet", d.device_get);
  resolve(get, "cuDeviceGetName", d.device_get_name);
  resolve(get, "cuDeviceGetAttribute", d.device_get_attribute);
  resolve(get, "cuDeviceTotalMem", d.device_total_mem);
  resolve(get, "cuDevicePrimaryCtxRetain", d.primary_ctx_retain);
  resolve(get, "cuDevicePrimaryCtxRelease", d.primary_ctx_release);
  resolve(get, "cuCtxGetCurrent", d.ctx_get_current);
  resolve(get, "cuCtxSetCurrent", d.ctx_set_current);
  resolve(get, "cuCtxPushCurrent", d.ctx_push_current);
  resolve(get, "cuCtxPopCurrent", d.ctx_pop_current);
  resolve(get, "cuCtxGetDevice", d.ctx_get_device);
  resolve(get, "cuCtxSynchronize", d.ctx_synchronize);
  resolve(get, "cuModuleLoadData", d.module_load_data);
  resolve(get, "cuModuleUnload", d.module_unload);
  resolve(get, "cuModuleGetFunction", d.module_get_function);
  resolve(get, "cuFuncSetAttribute", d.func_set_attribute);
  resolve(get, "cuFuncGetAttribute", d.func_get_attribute);
  resolve(get, "cuLaunchKernel", d.launch_kernel);
  resolve(get, "cuMemAlloc", d.mem_alloc);
  resolve(get, "cuMemFree", d.mem_free);
  resolve(get, "cuMemGetInfo", d.mem_get_info);
  resolve(get, "cuMemcpyHtoD", d.memcpy_htod);
  resolve(get, "cuMemcpyDtoH", d.memcpy_dtoh);
  resolve(get, "cuMemsetD8Async", d.memset_d8_async);
  resolve(get, "cuStreamCreate", d.stream_create);
  resolve(get, "cuStreamDestroy", d.stream_destroy);
  resolve(get, "cuStreamSynchronize", d.stream_synchronize);
  resolve(get, "cuStreamBeginCapture", d.stream_begin_capture);
  resolve(get, "cuStreamEndCapture", d.stream_end_capture);
  resolve(get, "cuGraphInstantiateWithFlags", d.graph_instantiate);
  resolve(get, "cuGraphLaunch", d.graph_launch);
  resolve(get, "cuGraphExecDestroy", d.graph_exec_destroy);
  resolve(get, "cuGraphDestroy", d.graph_destroy);
  resolve(get, "cuEventCreate", d.event_create);
  resolve(get, "cuEventDestroy", d.event_destroy);
  resolve(get, "cuEventRecord", d.event_record);
  resolve(get, "cuEventSynchronize", d.event_synchronize);
  resolve(get, "cuEventElapsedTime", d.event_elapsed_time);
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
