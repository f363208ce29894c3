// DeviceDesc from driver attributes.
#include "runtime/device_query.hpp"

#include "runtime/cuda_driver.hpp"

namespace kt::rt {

namespace {
int attribute(CUdevice device, CUdevice_attribute which, const char* /*name*/) {
  int value = 0;
  check(driver().device_get_attribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}
}  // namespace

DeviceDesc query_device(CUdevice device) {
  const CudaDriver& d = driver();
  DeviceDesc desc;
  char name[256] = {};
  check(d.device_get_name(name, sizeof(name), device), "cuDeviceGetName");
  desc.name = name;
#define KT_ATTR(field, attr) desc.field = attribute(device, attr, #attr)
  KT_ATTR(cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  KT_ATTR(cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  KT_ATTR(num_sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  KT_ATTR(max_smem_per_block_optin_bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  KT_ATTR(smem_per_sm_bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  KT_ATTR(regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  KT_ATTR(max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  KT_ATTR(max_ctas_per_sm, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
#undef KT_ATTR
  desc.l2_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2");
  desc.sm_clock_mhz = attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock") / 1000;
  const int memory_clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memclock");
  const int bus_bits = attribute(device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "bus");
  std::size_t total = 0;
  check(d.device_total_mem(&total, device), "cuDeviceTotalMem");
  desc.memory_bytes = std::int64_t(total);
  check(d.driver_get_version(&desc.driver_version), "cuDriverGetVersion");

  // Rates: the profile of the same architecture per SM and clock; else the bus arithmetic.
  const DeviceDesc* reference = nullptr;
  for (const auto& name_key : device_profile_names()) {
    const DeviceDesc& p = device_profile(name_key);
    if (p.cc_major == desc.cc_major && p.cc_minor == desc.cc_minor) {
      if (reference == nullptr || p.name == desc.name) reference = &p;
    }
  }
  const double theoretical_gbps = 2.0 * memory_clock_khz * 1e3 * bus_bits / 8 / 1e9;
  if (reference != nullptr) {
    const double scale = double(desc.num_sms) * std::max(desc.sm_clock_mhz, 1) /
                         (double(reference->num_sms) * reference->sm_clock_mhz);
    desc.mma_sync_tflops = reference->mma_sync_tflops * scale;
    desc.wgmma_tflops = reference->wgmma_tflops * scale;
    desc.dram_gbps = reference->name == desc.name ? reference->dram_gbps : 0.9 * theoretical_gbps;
    desc.l2_gbps = reference->l2_gbps * scale;
  } else {
    // Unknown architecture: 1024 dense bf16 FMAs per SM per clock (Ampere-class).
    desc.mma_sync_tflops = 2.0 * 1024 * desc.num_sms * desc.sm_clock_mhz * 1e6 / 1e12;
    desc.dram_gbps = 0.9 * theoretical_gbps;
    desc.l2_gbps = kL2OverDramBandwidth * desc.dram_gbps;
  }
  desc.from_profile = false;
  return desc;
}

DeviceDesc query_current_device() {
  CUdevice device = 0;
  check(driver().ctx_get_device(&device), "cuCtxGetDevice");
  return query_device(device);
}

}  // namespace kt::rt
