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

DeviceDesc make_a100() {
  DeviceDesc d;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.cc_major = 8;
  d.cc_minor = 0;
  d.num_sms = 108;
  d.max_smem_per_block_optin_bytes = 166912;
  d.smem_per_sm_bytes = 167936;
  d.regs_per_sm = 65536;
  d.max_threads_per_sm = 2048;
  d.max_ctas_per_sm = 32;
  d.l2_bytes = 40LL << 20;
  d.memory_bytes = 80LL << 30;
  d.sm_clock_mhz = 1410;
  d.dram_gbps = 1800;
  d.mma_sync_tflops = 312;
  d.wgmma_tflops = 0;
  d.from_profile = true;
  return d;
}

DeviceDesc make_hopper(const char* name, double dram_gbps, std::int64_t memory_bytes) {
  DeviceDesc d;
  d.name = name;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.num_sms = 132;
  d.max_smem_per_block_optin_bytes = 232448;
  d.smem_per_sm_bytes = 233472;
  d.regs_per_sm = 65536;
  d.max_threads_per_sm = 2048;
  d.max_ctas_per_sm = 32;
  d.l2_bytes = 50LL << 20;
  d.memory_bytes = memory_bytes;
  d.sm_clock_mhz = 1980;
  // NOTE: mma.sync on Hopper issues at about 2/3 of the wgmma rate; FA2-style kernels
  // plateau near 350-400 TFLOP/s there (SDPA's FlashAttention-2 backend on an H200).
  d.dram_gbps = dram_gbps;
  d.mma_sync_tflops = 660;
  d.wgmma_tflops = 989;
  d.from_profile = true;
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
