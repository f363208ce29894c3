// Device identity and the built-in profiles. Rates are leads from datasheets and from anchors
// measured on an H200 (bench/NOTES.md); the tuner's measurements supersede them.
#include "core/device_desc.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kt {

std::string DeviceDesc::arch() const {
  if (cc_major == 9 && cc_minor == 0) return "sm_90a";
  return fmt::format("sm_{}{}", cc_major, cc_minor);
}

std::string DeviceDesc::fingerprint() const {
  return fmt::format("{}/cc{}{}/{}sm", name, cc_major, cc_minor, num_sms);
}

std::string DeviceDesc::class_key() const {
  return fmt::format("cc{}{}/{}sm", cc_major, cc_minor, num_sms);
}

namespace {

// A profile of compute capability <cc_major>.0 with what sm_80 and sm_90 share: 64K registers,
// 2048 threads and 32 CTAs per SM, and a block may opt in to all of an SM's shared memory but the
// 1 KB the system reserves per CTA.
DeviceDesc make_profile(const char* name, int cc_major, int num_sms, int smem_per_sm_bytes) {
  DeviceDesc d;
  d.name = name;
  d.cc_major = cc_major;
  d.cc_minor = 0;
  d.num_sms = num_sms;
  d.max_smem_per_block_optin_bytes = smem_per_sm_bytes - 1024;
  d.smem_per_sm_bytes = smem_per_sm_bytes;
  d.regs_per_sm = 65536;
  d.max_threads_per_sm = 2048;
  d.max_ctas_per_sm = 32;
  d.from_profile = true;
  return d;
}

DeviceDesc make_a100() {
  DeviceDesc d = make_profile("NVIDIA A100-SXM4-80GB", 8, 108, 167936);
  d.l2_bytes = 40LL << 20;
  d.memory_bytes = 80LL << 30;
  d.sm_clock_mhz = 1410;
  d.dram_gbps = 1800;
  d.mma_sync_tflops = 312;
  d.wgmma_tflops = 0;
  return d;
}

DeviceDesc make_hopper(const char* name, double dram_gbps, std::int64_t memory_bytes) {
  DeviceDesc d = make_profile(name, 9, 132, 233472);
  d.l2_bytes = 50LL << 20;
  d.memory_bytes = memory_bytes;
  d.sm_clock_mhz = 1980;
  // NOTE: mma.sync on Hopper issues at about 2/3 of the wgmma rate; FA2-style kernels
  // plateau near 350-400 TFLOP/s there (SDPA's FlashAttention-2 backend on an H200).
  d.dram_gbps = dram_gbps;
  d.mma_sync_tflops = 660;
  d.wgmma_tflops = 989;
  return d;
}

struct NamedProfile {
  const char* key;
  DeviceDesc desc;
};

const std::vector<NamedProfile>& profiles() {
  static const std::vector<NamedProfile> all = {
      {"a100", make_a100()},
      {"h100-sxm", make_hopper("NVIDIA H100 80GB HBM3", 3000, 80LL << 30)},
      // 4.27 TB/s: the device-to-device copy measured on an H200.
      {"h200", make_hopper("NVIDIA H200", 4270, 141LL << 30)},
  };
  return all;
}

}  // namespace

const DeviceDesc& device_profile(std::string_view name) {
  for (const auto& p : profiles())
    if (name == p.key) return p.desc;
  throw Error(ErrorKind::kNotFound, fmt::format("unknown device profile '{}': expected one of {}",
                                                name, fmt::join(device_profile_names(), ", ")));
}

std::vector<std::string> device_profile_names() {
  std::vector<std::string> names;
  for (const auto& p : profiles()) names.emplace_back(p.key);
  return names;
}

}  // namespace kt
