// The fleet manifest: what a file says (problems of every op by their CLI syntax and flags,
// devices, tuning options), the canonical text and its hash, the line each problem and device is
// written as, and errors that name the line and field.
#include <gtest/gtest.h>

#include <string>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/manifest.hpp"

namespace kt {
namespace {

constexpr const char* kManifest = R"(# the problems of one model
kerntune-manifest 1
tune candidates=4   # the same options on every shard
device h200
device h100-sxm name="NVIDIA H100 PCIe" sms=114 clock_mhz=1755

gemm 4096x4096x4096
gemm 16x4096x4096 dtype=fp16 out-dtype=fp32 layout=nn
attention b=4,hq=32,hkv=8,s=4096,d=128 causal
rmsnorm rows=8192,hidden=4096 residual
key attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d64.full
gemm 4096x4096x4096   # again: kept once
)";

// The message of the kt::Error parsing `text` throws ("" when it parses).
std::string parse_error(const std::string& text) {
  try {
    parse_manifest(text, "m.txt");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(Manifest, ParsesProblemsOfEveryOpDevicesAndTuning) {
  const Manifest m = parse_manifest(kManifest, "m.txt");
  ASSERT_EQ(m.problem_keys.size(), 5u);
  EXPECT_EQ(m.problem_keys[0], "gemm:bf16:bf16:nt:4096x4096x4096");
  EXPECT_EQ(m.problem_keys[1], "gemm:fp16:fp32:nn:16x4096x4096");
  EXPECT_EQ(m.problem_keys[2], "attn:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal");
  EXPECT_EQ(m.problem_keys[3], "rmsnorm:bf16:r8192.h4096.res");
  EXPECT_EQ(m.problem_keys[4], "attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d64.full");
  ASSERT_EQ(m.devices.size(), 2u);
  EXPECT_EQ(m.devices[0].desc().fingerprint(), device_profile("h200").fingerprint());
  const DeviceDesc pcie = m.devices[1].desc();
  EXPECT_EQ(pcie.fingerprint(), "NVIDIA H100 PCIe/cc90/114sm");
  EXPECT_EQ(pcie.sm_clock_mhz, 1755);
  // The tensor-core rates follow SMs x clock.
  const DeviceDesc& sxm = device_profile("h100-sxm");
  EXPECT_NEAR(pcie.wgmma_tflops, sxm.wgmma_tflops * 114 * 1755 / (132.0 * 1980), 1e-9);
  EXPECT_EQ(m.tuning.candidates, 4);
  EXPECT_EQ(m.tuning.finalists, 3);
}

TEST(Manifest, CanonicalTextParsesBackAndItsHashIgnoresCommentsButNotOrder) {
  const Manifest m = parse_manifest(kManifest, "m.txt");
  const Manifest again = parse_manifest(to_text(m), "canonical");
  EXPECT_EQ(again.problem_keys, m.problem_keys);
  EXPECT_EQ(to_text(again), to_text(m));
  EXPECT_EQ(manifest_sha256(again), manifest_sha256(m));
  EXPECT_EQ(manifest_sha256(m).size(), 64u);

  const Manifest plain = parse_manifest(
      "kerntune-manifest 1\ndevice h200\ngemm 64x64x64\nrmsnorm rows=1,hidden=8\n", "a");
  const Manifest commented = parse_manifest(
      "# x\n\nkerntune-manifest 1   # v\n  device   h200\ngemm 64x64x64 # y\nrmsnorm "
      "rows=1,hidden=8\n",
      "b");
  const Manifest reordered = parse_manifest(
      "kerntune-manifest 1\ndevice h200\nrmsnorm rows=1,hidden=8\ngemm 64x64x64\n", "c");
  EXPECT_EQ(manifest_sha256(plain), manifest_sha256(commented));
  EXPECT_NE(manifest_sha256(plain), manifest_sha256(reordered));
}

TEST(Manifest, ProblemLinesUseTheShapeSyntaxWhereTheOpGivesItBack) {
  EXPECT_EQ(problem_line("gemm:bf16:bf16:nt:4096x4096x4096"), "gemm 4096x4096x4096");
  EXPECT_EQ(problem_line("gemm:fp16:fp32:nn:16x4096x4096"),
            "gemm 16x4096x4096 dtype=fp16 out-dtype=fp32 layout=nn");
  EXPECT_EQ(problem_line("rmsnorm:fp16:r8192.h4096.res"),
            "rmsnorm rows=8192,hidden=4096 residual dtype=fp16");
  // An op without the inverse is written by key, which parses too.
  const std::string attention = problem_line("attn:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal");
  const Manifest m =
      parse_manifest("kerntune-manifest 1\ndevice a100\n" + attention + "\n", "recorded");
  EXPECT_EQ(m.problem_keys.at(0), "attn:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal");
  EXPECT_THROW(problem_line("conv:bf16:3x3"), Error);
}

TEST(Manifest, DeviceLinesNameTheProfileAndWhatDiffers) {
  EXPECT_EQ(device_line(device_profile("h200")), "device h200");
  EXPECT_EQ(device_line(device_variant(device_profile("h200"), "", 114, 0)), "device h200 sms=114");
  EXPECT_EQ(device_line(device_variant(device_profile("h100-sxm"), "NVIDIA H100 PCIe", 114, 1755)),
            "device h100-sxm name=\"NVIDIA H100 PCIe\" sms=114 clock_mhz=1755");
  DeviceDesc turing = device_profile("a100");
  turing.cc_major = 7;
  turing.cc_minor = 5;
  EXPECT_EQ(device_line(turing), std::nullopt);
  // What device_line writes parses back to the same fingerprint.
  const DeviceDesc variant = device_variant(device_profile("a100"), "NVIDIA A100 PCIe", 100, 1300);
  const Manifest m =
      parse_manifest("kerntune-manifest 1\n" + *device_line(variant) + "\ngemm 8x8x8\n", "d");
  EXPECT_EQ(m.devices.at(0).desc().fingerprint(), variant.fingerprint());
}

TEST(Manifest, ErrorsNameTheLineAndField) {
  const std::string head = "kerntune-manifest 1\ndevice h200\n";
  EXPECT_NE(parse_error("gemm 8x8x8\n").find("m.txt:1: field 1 'gemm': a manifest starts with"),
            std::string::npos);
  EXPECT_NE(parse_error("kerntune-manifest 2\n").find("m.txt:1: field 2 '2': manifest version 2"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "conv 3x3\n").find("m.txt:3: field 1 'conv': unknown directive"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "gemm 8x8\n").find("m.txt:3: field 2 '8x8':"), std::string::npos);
  EXPECT_NE(parse_error(head + "\n# c\nattention b=1,h=8,s=128,d=64 causall\n")
                .find("m.txt:5: field 3 'causall': not a flag of attention (causal)"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "gemm 8x8x8 residual\n")
                .find("m.txt:3: field 3 'residual': gemm takes no flags"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "gemm 8x8x8 dtype=fp8\n").find("m.txt:3: field 3 'dtype=fp8':"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "rmsnorm rows=8,hidden=8 layout=nt\n")
                .find("m.txt:3: field 3 'layout=nt': RMSNorm has no --layout"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "gemm 8x8x8 colour=red\n")
                .find("field 3 'colour=red': unknown problem option"),
            std::string::npos);
  EXPECT_NE(parse_error("kerntune-manifest 1\ndevice h300\n")
                .find("m.txt:2: field 2 'h300': no "
                      "such device profile"),
            std::string::npos);
  EXPECT_NE(parse_error("kerntune-manifest 1\ndevice h200 sms=0\n")
                .find("m.txt:2: field 3 'sms=0': out of range (1-1024)"),
            std::string::npos);
  EXPECT_NE(parse_error("kerntune-manifest 1\ndevice h200 name=\"H\n")
                .find("m.txt:2: a quote is not closed"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "tune candidates=many\n")
                .find("m.txt:3: field 2 'candidates=many': not a whole decimal number"),
            std::string::npos);
  EXPECT_NE(parse_error(head + "key gemm:bf16:bf16:nt:0x8x8\n").find("m.txt:3: field 2 "),
            std::string::npos);
  EXPECT_NE(parse_error(head).find("no problem lines"), std::string::npos);
  EXPECT_NE(parse_error("kerntune-manifest 1\ngemm 8x8x8\n").find("no device line"),
            std::string::npos);
  EXPECT_NE(parse_error("# only a comment\n").find("empty manifest"), std::string::npos);
  EXPECT_EQ(parse_error(head + "gemm 8x8x8\n"), "");
}

TEST(Manifest, FingerprintsTakeApartWhatDevicesWrite) {
  for (const std::string& name : device_profile_names()) {
    const DeviceDesc& d = device_profile(name);
    const auto parts = parse_fingerprint(d.fingerprint());
    ASSERT_TRUE(parts) << d.fingerprint();
    EXPECT_EQ(parts->name, d.name);
    EXPECT_EQ(parts->cc_major, d.cc_major);
    EXPECT_EQ(parts->cc_minor, d.cc_minor);
    EXPECT_EQ(parts->num_sms, d.num_sms);
  }
  EXPECT_EQ(parse_fingerprint("A/B/cc80/108sm")->name, "A/B");
  EXPECT_FALSE(parse_fingerprint("NVIDIA H200"));
  EXPECT_FALSE(parse_fingerprint("x/cc9/132sm"));
  EXPECT_FALSE(parse_fingerprint("x/cc90/sm"));
  EXPECT_FALSE(parse_fingerprint("/cc90/132sm"));
}

}  // namespace
}  // namespace kt
