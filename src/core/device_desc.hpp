// What kerntune needs to know about a GPU: limits for validity and occupancy, rates for the
// model, identity for the tuning key. Filled from the driver (runtime) or a built-in profile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kt {

// Shared-memory bytes an SM delivers a clock: 32 banks of 4 bytes (sm_70 to sm_90), for the
// models of every op.
constexpr double kSmemBytesPerClockPerSm = 128.0;

// L2's bandwidth to the SMs over DRAM's where a profile has no measured rate of its own: the
// ratio first fitted on the H200 (DeviceDesc::l2_gbps).
constexpr double kL2OverDramBandwidth = 3.0;

struct DeviceDesc {
  std::string name;  // as the driver reports it, e.g. "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  int num_sms = 0;
  int max_smem_per_block_optin_bytes = 0;  // after raising the dynamic limit
  int smem_per_sm_bytes = 0;
  int regs_per_sm = 0;
  int max_threads_per_sm = 0;
  int max_ctas_per_sm = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  int sm_clock_mhz = 0;        // boost clock
  double dram_gbps = 0;        // achievable device-memory bandwidth, read+write
  double l2_gbps = 0;          // L2 to the SMs, all of them together (the die's, not DRAM's)
  double mma_sync_tflops = 0;  // dense bf16 through mma.sync (the sm80 family)
  double wgmma_tflops = 0;     // dense bf16 through wgmma (0 before Hopper)
  int driver_version = 0;      // 0 for a profile
  bool from_profile = false;   // true when this describes no real, present device

  // "sm_90a" for Hopper (wgmma and setmaxnreg need the 'a'), else "sm_<major><minor>".
  std::string arch() const;
  // Identity for tuning keys: name, compute capability and SM count, e.g.
  // "NVIDIA H200/cc90/132sm". Driver and clocks are recorded beside it, not in it.
  std::string fingerprint() const;
  // Same cc and SM count: the "same class" grade of a lookup.
  std::string class_key() const;
};

// A device fingerprint taken apart: "NVIDIA H200/cc90/132sm" -> name, compute capability, SMs.
struct FingerprintParts {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int num_sms = 0;
  bool operator==(const FingerprintParts&) const = default;
};
// nullopt for text that fingerprint() does not write (the name may itself hold '/').
std::optional<FingerprintParts> parse_fingerprint(std::string_view fingerprint);

// `base` as another part of its GPU model: `name` (empty: base's), `num_sms` and `sm_clock_mhz`
// (0: base's), the tensor-core rates scaled by SMs x clock as the runtime scales a profile for a
// real device; memory and limits kept. Throws kt::Error (invalid argument) naming a count or
// clock out of range (SMs 1-1024, clock 100-5000 MHz) or a name holding '/' or a newline.
DeviceDesc device_variant(const DeviceDesc& base, const std::string& name, int num_sms,
                          int sm_clock_mhz);

// Built-in profiles for prediction without a GPU: "a100", "h100-sxm", "h200".
const DeviceDesc& device_profile(std::string_view name);  // throws kt::Error listing the names
std::vector<std::string> device_profile_names();

}  // namespace kt
