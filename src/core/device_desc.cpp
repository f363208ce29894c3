// Device identity and the built-in profiles. Rates are leads from datasheets and from anchors
// measured on an H200 (bench/NOTES.md); the tuner's measurements supersede them.
#include "core/device_desc.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"

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

std::optional<FingerprintParts> parse_fingerprint(std::string_view fingerprint) {
  // The last two '/'-separated fields are "cc<major><minor>" and "<n>sm"; the name is the rest.
  const std::size_t sm_slash = fingerprint.rfind('/');
  if (sm_slash == std::string_view::npos || sm_slash == 0) return std::nullopt;
  const std::size_t cc_slash = fingerprint.rfind('/', sm_slash - 1);
  if (cc_slash == std::string_view::npos || cc_slash == 0) return std::nullopt;
  const std::string_view cc = fingerprint.substr(cc_slash + 1, sm_slash - cc_slash - 1);
  const std::string_view sms = fingerprint.substr(sm_slash + 1);
  if (cc.size() < 4 || cc.substr(0, 2) != "cc" || sms.size() < 3 ||
      sms.substr(sms.size() - 2) != "sm")
    return std::nullopt;
  FingerprintParts parts;
  parts.name = std::string(fingerprint.substr(0, cc_slash));
  try {
    // NOTE: fingerprint() writes the minor version as one digit (cc 9.0 -> "cc90").
    const std::int64_t major = parse_int(cc.substr(2, cc.size() - 3), "compute capability");
    const std::int64_t sm_count = parse_int(sms.substr(0, sms.size() - 2), "SM count");
    if (major < 1 || major > 99 || sm_count < 1 || sm_count > 1 << 20) return std::nullopt;
    parts.cc_major = int(major);
    parts.cc_minor = int(parse_int(cc.substr(cc.size() - 1), "compute capability"));
    parts.num_sms = int(sm_count);
  } catch (const Error&) {
    return std::nullopt;
  }
  return parts;
}

DeviceDesc device_variant(const DeviceDesc& base, const std::string& name, int num_sms,
                          int sm_clock_mhz) {
  if (num_sms != 0 && (num_sms < 1 || num_sms > 1024))
    throw_invalid(fmt::format("SM count {} is out of range (1-1024)", num_sms));
  if (sm_clock_mhz != 0 && (sm_clock_mhz < 100 || sm_clock_mhz > 5000))
    throw_invalid(fmt::format("SM clock {} MHz is out of range (100-5000)", sm_clock_mhz));
  if (name.find_first_of("/\n") != std::string::npos)
    throw_invalid(fmt::format("device name '{}' holds '/' or a line break", name));
  DeviceDesc d = base;
  if (!name.empty()) d.name = name;
  if (num_sms != 0) d.num_sms = num_sms;
  if (sm_clock_mhz != 0) d.sm_clock_mhz = sm_clock_mhz;
  const double scale =
      double(d.num_sms) * d.sm_clock_mhz / (double(base.num_sms) * base.sm_clock_mhz);
  d.mma_sync_tflops = base.mma_sync_tflops * scale;
  d.wgmma_tflops = base.wgmma_tflops * scale;
  return d;
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
  d.l2_gbps = kL2OverDramBandwidth * d.dram_gbps;
  d.mma_sync_tflops = 312;
  d.wgmma_tflops = 0;
  return d;
}

// The device-to-device copy rate measured on an H200, GB/s.
constexpr double kH200CopyGbps = 4270;

DeviceDesc make_hopper(const char* name, double dram_gbps, std::int64_t memory_bytes) {
  DeviceDesc d = make_profile(name, 9, 132, 233472);
  d.l2_bytes = 50LL << 20;
  d.memory_bytes = memory_bytes;
  d.sm_clock_mhz = 1980;
  // NOTE: mma.sync on Hopper issues at about 2/3 of the wgmma rate; FA2-style kernels
  // plateau near 350-400 TFLOP/s there (SDPA's FlashAttention-2 backend on an H200).
  d.dram_gbps = dram_gbps;
  // The H100 SXM and the H200 share the die, its L2 and clocks; only the HBM differs. The ratio
  // fitted on the H200 times its copy rate; the H100 read 12.2 TB/s of L2 in 1034 x 5120 x
  // 13824's 256 x 80 tiles (bench/NOTES.md, "The GEMM model and its calibration").
  d.l2_gbps = kL2OverDramBandwidth * kH200CopyGbps;
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
      {"h200", make_hopper("NVIDIA H200", kH200CopyGbps, 141LL << 30)},
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
