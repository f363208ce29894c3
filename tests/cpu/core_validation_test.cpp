// Input validation of the core vocabulary: shape parsing, validate(problem, config, device)
// against the device limits, enumerate_gemm_configs' agreement with validate(), the vector
// alignment predicate, and SHA-256 against the FIPS 180-4 test vectors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/gemm_small_m.hpp"
#include "core/sha256.hpp"
#include "support/gemm_builders.hpp"

namespace {

// parse_gemm_shape must throw kt::Error (kInvalidArgument) whose message contains every needle.
void expect_bad_shape(const std::string& shape, const std::vector<std::string>& needles) {
  SCOPED_TRACE("shape '" + shape + "'");
  kt::GemmProblem p;
  try {
    kt::parse_gemm_shape(shape, p);
    ADD_FAILURE() << "accepted";
  } catch (const kt::Error& e) {
    EXPECT_EQ(e.kind(), kt::ErrorKind::kInvalidArgument) << e.what();
    const std::string message = e.what();
    for (const auto& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos)
          << "message '" << message << "' does not mention '" << needle << "'";
  }
}

using kt::testing::config;
using kt::testing::problem;
using kt::testing::sm90_config;

// validate() must reject with a reason containing `needle`.
void expect_rejected(const kt::GemmProblem& p, const kt::GemmConfig& c, const kt::DeviceDesc& d,
                     const std::string& needle) {
  const std::optional<std::string> why = kt::validate(p, c, d);
  ASSERT_TRUE(why.has_value()) << kt::to_key(c) << " accepted for " << kt::to_key(p);
  EXPECT_NE(why->find(needle), std::string::npos)
      << kt::to_key(c) << ": reason '" << *why << "' does not mention '" << needle << "'";
}

}  // namespace

TEST(ParseGemmShape, AcceptsMxNxK) {
  kt::GemmProblem p;
  kt::parse_gemm_shape("4100x4096x127", p);
  EXPECT_EQ(p.m, 4100);
  EXPECT_EQ(p.n, 4096);
  EXPECT_EQ(p.k, 127);
}

TEST(ParseGemmShape, RejectsBadShapesNamingTheBadPart) {
  expect_bad_shape("0x4096x4096", {"M", "0"});
  expect_bad_shape("4096x0x4096", {"N", "0"});
  expect_bad_shape("-1x2x3", {"M", "-1"});
  expect_bad_shape("4096x4096", {"MxNxK", "4096x4096"});
  expect_bad_shape("axbxc", {"M", "'a'"});
  expect_bad_shape("1x2xc", {"K", "'c'"});
  expect_bad_shape("1x2x3x4", {"MxNxK"});
  expect_bad_shape("", {"MxNxK"});
  expect_bad_shape("99999999999x1x1", {"M", "99999999999"});
  // Beyond int64 itself.
  expect_bad_shape("1x99999999999999999999x1", {"N", "out of range"});
}

TEST(ParseGemmShape, RejectsOperandsBeyond32BitIndexing) {
  // 2^31-1 is prime, so the largest single operand is a vector; 46341^2 = 2147488281 is the
  // smallest square beyond it and 46340^2 = 2147395600 the largest within.
  kt::GemmProblem p;
  EXPECT_NO_THROW(kt::parse_gemm_shape("2147483647x1x1", p));
  EXPECT_NO_THROW(kt::parse_gemm_shape("46340x1x46340", p));
  expect_bad_shape("2147483648x1x1", {"M"});
  expect_bad_shape("46341x1x46341", {"A"});  // A is M x K
  expect_bad_shape("1x46341x46341", {"B"});  // B holds K x N elements in either layout
  expect_bad_shape("46341x46341x1", {"C"});  // C is M x N
}

TEST(ValidateConfig, AcceptsTheStandardConfigOnEveryProfile) {
  const kt::GemmConfig c = config(128, 128, 32, 64, 64, 4);
  for (const std::string& name : kt::device_profile_names())
    for (kt::Layout layout : {kt::Layout::kNN, kt::Layout::kNT}) {
      const auto why = kt::validate(problem(4096, 4096, 4096, layout), c, kt::device_profile(name));
      EXPECT_FALSE(why.has_value()) << name << ": " << why.value_or("");
    }
}

TEST(ValidateConfig, RejectsSharedMemoryBeyondTheDeviceOptInLimit) {
  const kt::DeviceDesc& a100 = kt::device_profile("a100");
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  // stages x (BM + BN) x BK x 2 bytes of bf16 operand tiles.
  const kt::GemmConfig fits_h200_only = config(256, 128, 64, 64, 64, 4);
  const int bytes = 4 * (256 + 128) * 64 * 2;  // 196608
  EXPECT_EQ(kt::smem_bytes(p, fits_h200_only), bytes);
  ASSERT_GT(bytes, a100.max_smem_per_block_optin_bytes);
  ASSERT_LE(bytes, h200.max_smem_per_block_optin_bytes);
  expect_rejected(p, fits_h200_only, a100, "shared memory");
  EXPECT_FALSE(kt::validate(p, fits_h200_only, h200).has_value());

  const kt::GemmConfig fits_neither = config(256, 128, 64, 64, 64, 5);
  ASSERT_GT(5 * (256 + 128) * 64 * 2, h200.max_smem_per_block_optin_bytes);
  expect_rejected(p, fits_neither, h200, "shared memory");
  expect_rejected(p, fits_neither, a100, "shared memory");
}

TEST(ValidateConfig, RejectsWarpTilesThatDoNotDivideTheTile) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  expect_rejected(p, config(32, 128, 32, 64, 32, 4), h200, "warp_m");
  expect_rejected(p, config(128, 32, 32, 32, 64, 4), h200, "warp_n");
  expect_rejected(p, config(128, 128, 32, 48, 64, 4), h200, "warp_m");
}

TEST(ValidateConfig, RejectsMoreThanEightWarps) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  // (128/32) x (128/32) = 16 warps; (256/64) x (256/64) = 16 warps.
  expect_rejected(p, config(128, 128, 32, 32, 32, 4), h200, "16 warps");
  expect_rejected(p, config(256, 256, 32, 64, 64, 3), h200, "16 warps");
  // Exactly 8 warps is allowed: (256/64) x (128/64).
  EXPECT_FALSE(kt::validate(p, config(256, 128, 32, 64, 64, 3), h200).has_value());
}

TEST(ValidateConfig, RejectsTileKOtherThan32Or64) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  for (int bk : {0, 16, 48, 128})
    expect_rejected(p, config(128, 128, bk, 64, 64, 3), h200, "tile_k");
}

TEST(ValidateConfig, RejectsSplitKThatLeavesTheLastSplitEmpty) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  // Splits are whole k-tiles: K = 96 in 4 splits of ceil(24 / 32) = 1 tile of 32 gives splits
  // starting at 0, 32, 64 and 96; the last starts at K and is empty.
  expect_rejected(problem(4096, 4096, 96), config(128, 128, 32, 64, 64, 4, 4), h200, "split_k");
  // 3 splits of 32 cover 96 exactly: every split has work.
  EXPECT_FALSE(kt::validate(problem(4096, 4096, 96), config(128, 128, 32, 64, 64, 4, 3), h200));
  // K = 100 in 5 splits of one 32-deep tile: the fifth would start at 128 > 100.
  expect_rejected(problem(64, 64, 100), config(64, 64, 32, 32, 32, 4, 5), h200, "split_k");
  // K = 100 in 4 splits: starts 0, 32, 64, 96 < 100, so the last split holds 4 of K.
  EXPECT_FALSE(kt::validate(problem(64, 64, 100), config(64, 64, 32, 32, 32, 4, 4), h200));
}

TEST(ValidateConfig, RejectsNarrowTilesForTheNnLayoutOnly) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmConfig narrow = config(64, 32, 32, 32, 32, 4);
  expect_rejected(problem(4096, 4096, 4096, kt::Layout::kNN), narrow, h200, "nn");
  EXPECT_FALSE(kt::validate(problem(4096, 4096, 4096, kt::Layout::kNT), narrow, h200));
  EXPECT_FALSE(kt::validate(problem(4096, 4096, 4096, kt::Layout::kNN),
                            config(64, 64, 32, 32, 32, 4), h200));
}

TEST(ValidateConfig, RejectsDevicesOlderThanAmpere) {
  kt::DeviceDesc volta = kt::device_profile("a100");
  volta.cc_major = 7;
  volta.cc_minor = 0;
  expect_rejected(problem(4096, 4096, 4096), config(128, 128, 32, 64, 64, 4), volta, "8.0");
}

TEST(ValidateSm90Config, NeedsAnSm90aDevice) {
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  const kt::GemmConfig c = sm90_config(128, 256, 4, 2);
  EXPECT_FALSE(kt::validate(p, c, kt::device_profile("h200")).has_value());
  expect_rejected(p, c, kt::device_profile("a100"), "sm_90a");
}

// The kernel's shared-memory layout past the ring: a full and an empty mbarrier per stage, and
// with split-K through L2 a consumer's mbarrier for the other splits' stripes (16 bytes; the
// epoch's barrier and word lie in the alignment slack), then the 1024-byte slack.
TEST(ValidateSm90Config, SplitKThroughL2AddsTheStripeBarriers) {
  const kt::GemmProblem p = problem(512, 512, 32768);
  const int ring = 5 * (128 + 128) * 64 * 2;
  EXPECT_EQ(kt::smem_bytes(p, sm90_config(128, 128, 5, 2)), ring + 5 * 16 + 1024);
  EXPECT_EQ(kt::smem_bytes(p, sm90_config(128, 128, 5, 2, 8)), ring + 5 * 16 + 16 + 1024);
  // Split-K in a cluster reduces over distributed shared memory: no stripe barriers.
  EXPECT_EQ(kt::smem_bytes(p, kt::testing::sm90_cluster_split_config(128, 128, 5, 2, 4)),
            ring + 5 * 16 + 1024);
}

TEST(ValidateSm90Config, TakesAnyRowLength) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmConfig c = sm90_config(128, 128, 4, 2);
  // K = 8 is the smallest K with 16-byte rows; ragged M and N need nothing.
  EXPECT_FALSE(kt::validate(problem(1, 8, 8), c, h200).has_value());
  EXPECT_FALSE(kt::validate(problem(127, 129, 72), c, h200).has_value());
  // Rows TMA cannot address (K % 8 != 0; nn's B with N % 8 != 0) are read from copies with
  // 16-byte rows: nothing is refused for them.
  EXPECT_FALSE(kt::validate(problem(128, 128, 100), c, h200).has_value());
  EXPECT_FALSE(kt::validate(problem(128, 129, 64, kt::Layout::kNN), c, h200).has_value());
  EXPECT_FALSE(kt::validate(problem(128, 129, 100, kt::Layout::kNN), c, h200).has_value());
}

TEST(PlanSm90Config, PadsUnalignedRowsIntoTheWorkspaceAfterItsFlags) {
  const kt::GemmConfig plain = sm90_config(128, 128, 4, 2);
  // Aligned rows, or the sm80 family (element loads): the operands themselves.
  EXPECT_TRUE(kt::plan_launch(problem(108, 128, 32768, kt::Layout::kNN), plain, 132).pads.empty());
  EXPECT_TRUE(kt::plan_launch(problem(108, 124, 32768, kt::Layout::kNT), plain, 132).pads.empty());
  EXPECT_TRUE(kt::plan_launch(problem(108, 124, 32768, kt::Layout::kNN),
                              config(128, 64, 64, 32, 32, 3), 132)
                  .pads.empty());
  // nn with N % 8 != 0 and even: the producer copies B itself (8 bytes a copy for N % 4 == 0,
  // else 4), unless the config has a cluster pair, stream-K or no producer warpgroup; odd N pads.
  const kt::GemmProblem even = problem(108, 124, 32768, kt::Layout::kNN);
  EXPECT_TRUE(kt::plan_launch(even, plain, 132).pads.empty());
  EXPECT_EQ(kt::workspace_bytes(even, plain, 132), 0);
  EXPECT_EQ(kt::sm90_mn_copy_bytes(even, plain), 8);
  EXPECT_EQ(kt::sm90_mn_copy_bytes(problem(108, 334, 32768, kt::Layout::kNN), plain), 4);
  EXPECT_EQ(kt::sm90_mn_copy_bytes(problem(108, 334, 32768, kt::Layout::kNT), plain), 0);
  EXPECT_EQ(kt::sm90_mn_copy_bytes(problem(108, 128, 32768, kt::Layout::kNN), plain), 0);
  kt::GemmConfig pair = plain;
  pair.cluster = 2;
  EXPECT_EQ(kt::sm90_mn_copy_bytes(even, pair), 0);
  EXPECT_EQ(kt::plan_launch(even, pair, 132).pads.size(), 1u);
  kt::GemmConfig inline_loads = plain;
  inline_loads.warp_specialized = false;
  EXPECT_EQ(kt::sm90_mn_copy_bytes(even, inline_loads), 0);
  // nn with odd N: B's K rows of N, after the flag region even without split-K.
  const kt::GemmProblem nn = problem(108, 123, 32768, kt::Layout::kNN);
  EXPECT_EQ(kt::sm90_mn_copy_bytes(nn, plain), 0);
  const kt::GemmLaunch launch = kt::plan_launch(nn, plain, 132);
  ASSERT_EQ(launch.pads.size(), 1u);
  const kt::GemmPaddedOperand& b = launch.pads[0];
  EXPECT_EQ(b.operand, 'B');
  EXPECT_EQ(b.rows, 32768);
  EXPECT_EQ(b.cols, 123);
  EXPECT_EQ(b.src_ld, 123);
  EXPECT_EQ(b.dst_ld, 128);
  EXPECT_EQ(b.offset, kt::kGemmFlagRegionBytes);
  EXPECT_EQ(launch.workspace_bytes, kt::kGemmFlagRegionBytes + 32768 * 128 * 2);
  EXPECT_EQ(b.launch.block[0], 256u);
  EXPECT_EQ(b.launch.grid[0], 4096u);  // a warp a row, 8 rows a CTA, at most 4096 CTAs
  EXPECT_FALSE(launch.reduce.has_value());
  // K % 8 != 0 with split-K, nt: A (M rows of K) then B (N rows of K), 256-byte aligned, after
  // the partial sums.
  kt::GemmConfig split = plain;
  split.split_k = 4;
  const kt::GemmProblem nt = problem(300, 500, 4100, kt::Layout::kNT);
  const kt::GemmLaunch both = kt::plan_launch(nt, split, 132);
  ASSERT_EQ(both.pads.size(), 2u);
  EXPECT_EQ(both.pads[0].operand, 'A');
  EXPECT_EQ(both.pads[0].rows, 300);
  EXPECT_EQ(both.pads[0].dst_ld, 4104);
  EXPECT_GE(both.pads[0].offset, kt::kGemmFlagRegionBytes + kt::splitk_partial_bytes(nt, split));
  EXPECT_EQ(both.pads[1].operand, 'B');
  EXPECT_EQ(both.pads[1].rows, 500);
  EXPECT_GE(both.pads[1].offset, both.pads[0].offset + 300 * 4104 * 2);
  for (const kt::GemmPaddedOperand& o : both.pads) EXPECT_EQ(o.offset % 256, 0) << o.operand;
  EXPECT_EQ(both.workspace_bytes, both.pads[1].offset + 500 * 4104 * 2);
}

TEST(ValidateSm90Config, RejectsTilesOutsideTheTemplate) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  expect_rejected(p, sm90_config(192, 128, 4, 2), h200, "tile_m");  // 96 rows per consumer
  expect_rejected(p, sm90_config(128, 100, 4, 2), h200, "tile_n");
  expect_rejected(problem(4096, 4096, 4096, kt::Layout::kNN), sm90_config(128, 96, 4, 2), h200,
                  "nt layout");
  expect_rejected(p, sm90_config(256, 256, 3, 2), h200, "accumulators");
  expect_rejected(p, sm90_config(128, 128, 4, 3), h200, "consumers");
  kt::GemmConfig narrow_k = sm90_config(128, 128, 4, 2);
  narrow_k.tile_k = 32;
  expect_rejected(p, narrow_k, h200, "tile_k");
  // Six 48 KB stages of a 128 x 256 tile do not fit 227 KB.
  expect_rejected(p, sm90_config(128, 256, 5, 2), h200, "shared memory");
  EXPECT_FALSE(kt::validate(p, sm90_config(128, 256, 4, 2), h200).has_value());
}

// 128 x 144 tiles (1536 x 1536: 12 x 11 = 132 tiles, one per SM) exist for nt only: nn's B moves
// whole 64-column atoms. Their TMA-store epilogue stages two 72-column slabs.
TEST(ValidateSm90Config, Tile144NeedsNt) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem nt = problem(1536, 1536, 8192);
  EXPECT_FALSE(kt::validate(nt, sm90_config(128, 144, 4, 2), h200).has_value());
  EXPECT_FALSE(kt::validate(nt, sm90_config(128, 144, 5, 2, 4, 0, 2), h200).has_value());
  EXPECT_FALSE(kt::validate(nt, sm90_config(128, 144, 4, 2, 1, 2), h200).has_value());
  EXPECT_FALSE(kt::validate(nt, sm90_config(128, 144, 4, 2, 1, 1, 2), h200).has_value());
  expect_rejected(nt, sm90_config(128, 144, 4, 2, 1, 4), h200, "slabs");
  expect_rejected(problem(1536, 1536, 8192, kt::Layout::kNN), sm90_config(128, 144, 4, 2), h200,
                  "nt layout");
}

// Two m64 rows of 136 or 144 columns a consumer (144 accumulators a thread: cuBLASLt's 256 x 136
// swap-AB tile) fit beside a whole-tile epilogue, not beside a split-K or stream-K reduction.
TEST(ValidateSm90Config, AtMost144AccumulatorsUnsplit) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem p = problem(1430, 3072, 2048);
  EXPECT_FALSE(
      kt::validate(p, kt::testing::swapped(sm90_config(256, 136, 4, 2)), h200).has_value());
  EXPECT_FALSE(kt::validate(p, sm90_config(128, 144, 4, 1), h200).has_value());
  expect_rejected(p, kt::testing::swapped(sm90_config(256, 136, 4, 2, 2)), h200,
                  "136 accumulators per consumer thread; at most 128 with split-K");
  kt::GemmConfig streamed = sm90_config(128, 144, 4, 1);
  streamed.stream_k = true;
  expect_rejected(p, streamed, h200, "at most 128");
  expect_rejected(p, sm90_config(128, 152, 4, 1), h200, "152 accumulators");
}

// 64 x 32 tiles (a 64 x 4096 x 4096 decode step: 128 CTAs without split-K) likewise; two
// 16-column slabs; in cluster pairs each CTA multicasts 16 rows of B (two whole swizzle periods).
TEST(ValidateSm90Config, Tile32NeedsNt) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem nt = problem(64, 4096, 4096);
  EXPECT_FALSE(kt::validate(nt, sm90_config(64, 32, 6, 1), h200).has_value());
  EXPECT_FALSE(kt::validate(nt, sm90_config(64, 32, 6, 1, 2), h200).has_value());
  EXPECT_FALSE(kt::validate(nt, sm90_config(64, 32, 6, 1, 1, 2), h200).has_value());
  expect_rejected(nt, sm90_config(64, 32, 6, 1, 1, 4), h200, "slabs");
  EXPECT_FALSE(kt::validate(nt, sm90_config(64, 32, 6, 1, 1, 0, 2), h200).has_value());
  expect_rejected(problem(64, 4096, 4096, kt::Layout::kNN), sm90_config(64, 32, 6, 1), h200,
                  "nt layout");
}

// A tile's splits in one cluster: as many CTAs as splits (2 to 8), no cluster along M, direct
// stores, the FP32 partial tile staged over the ring; no workspace, a cluster of split_k CTAs
// per tile, and the 128-row tile's 16 x 8 CTAs launched as 16 clusters of 8.
TEST(ValidateSm90Config, ClusterSplitKNeedsOneClusterOfSplitsThatStagesOverTheRing) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  using kt::testing::sm90_cluster_split_config;
  const kt::GemmProblem deep = problem(512, 512, 32768);
  const kt::GemmConfig clk8 = sm90_cluster_split_config(128, 128, 4, 2, 8);
  EXPECT_FALSE(kt::validate(deep, clk8, h200).has_value());
  EXPECT_EQ(kt::workspace_bytes(deep, clk8, 132), 0);
  EXPECT_EQ(kt::cluster_size(clk8), 8);
  EXPECT_EQ(kt::cluster_units(deep, clk8), 16);
  const kt::GemmLaunch launch = kt::plan_launch(deep, clk8, h200.num_sms);
  EXPECT_EQ(launch.main.grid[0], 128u);
  EXPECT_EQ(launch.main.cluster[0], 8u);
  EXPECT_EQ(launch.workspace_bytes, 0);
  EXPECT_NE(kt::gemm_kernel_expression(deep, clk8).find(", 1, 8, false, 1, false, true, 0>"),
            std::string::npos);

  kt::GemmConfig mismatched = clk8;
  mismatched.cluster_k = 4;
  expect_rejected(deep, mismatched, h200, "must equal split_k");
  expect_rejected(deep, sm90_cluster_split_config(128, 128, 4, 2, 16), h200, "2 to 8 splits");
  kt::GemmConfig along_m = sm90_cluster_split_config(128, 128, 4, 2, 2);
  along_m.cluster = 2;
  expect_rejected(deep, along_m, h200, "no cluster along M");
  expect_rejected(deep, kt::testing::pairs_along_n(sm90_cluster_split_config(128, 128, 4, 2, 2)),
                  h200, "no cluster along M or K");
  kt::GemmConfig staged = clk8;
  staged.epilogue = 2;
  expect_rejected(deep, staged, h200, "e0");
  // 128 x 256 tile, 2 stages: 128 KB of partial sums over a 96 KB ring.
  expect_rejected(deep, sm90_cluster_split_config(128, 256, 2, 2, 2), h200, "more stages");
  // Other families have no such field.
  kt::GemmConfig sm80 = config(128, 128, 32, 64, 64, 4, 2);
  sm80.cluster_k = 2;
  expect_rejected(deep, sm80, h200, "cluster");
  // The search tries pairs only (clusters of 4 and 8 do not all fit the H200 at once).
  int pairs = 0;
  for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(deep, h200)) {
    if (c.cluster_k == 1) continue;
    EXPECT_EQ(c.cluster_k, 2) << kt::to_key(c);
    EXPECT_EQ(c.split_k, 2) << kt::to_key(c);
    ++pairs;
  }
  EXPECT_GT(pairs, 0);
}

// Pairs along N (cn2): two horizontally adjacent tiles share their A tile by multicast, so a
// cluster unit is a pair of tile columns (the last one alone when the columns are odd); a decode
// step's swapped 64 x 32 tiles pair the two 32-token tiles of one 64-row weight tile.
TEST(ValidateSm90Config, PairsAlongNShareTheATileOfTwoTileColumns) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  using kt::testing::pairs_along_n;
  const kt::GemmProblem decode = problem(64, 4096, 4096);
  const kt::GemmConfig weights = pairs_along_n(kt::testing::swapped(sm90_config(64, 32, 12, 1)));
  ASSERT_FALSE(kt::validate(decode, weights, h200));
  EXPECT_EQ(kt::cluster_size(weights), 2);
  EXPECT_EQ(kt::cluster_units(decode, weights), 64);
  const kt::GemmLaunch launch = kt::plan_launch(decode, weights, h200.num_sms);
  EXPECT_EQ(launch.main.grid[0], 128u);
  EXPECT_EQ(launch.main.cluster[0], 2u);
  EXPECT_NE(kt::gemm_kernel_expression(decode, weights).find(", true, 2, false, true, 0>"),
            std::string::npos);
  // 520 columns of 128: five tile columns, three pairs.
  const kt::GemmProblem ragged = problem(300, 520, 4104);
  EXPECT_EQ(kt::cluster_units(ragged, pairs_along_n(sm90_config(128, 128, 4, 2, 4))), 3 * 3 * 4);
  kt::GemmConfig three = weights;
  three.cluster_n = 3;
  expect_rejected(decode, three, h200, "must be 2");
  kt::GemmConfig both = pairs_along_n(sm90_config(128, 128, 4, 2));
  both.cluster = 2;
  expect_rejected(ragged, both, h200, "no cluster along M or K");
}

// Swap-AB: the kernel computes C^T = B·A^T, so tiles count along N (tile_m) and M (tile_n);
// direct stores only; 16-token tiles take cluster pairs; other families have no such field; the
// search offers it for M <= 2048 only. With nn the kernel's A (the caller's K x N B) is M-major:
// one K atom a stage, no pairs along N splitting it.
TEST(ValidateSm90Config, SwapAbTilesTheTransposedProductForDecodeSteps) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  using kt::testing::swapped;
  const kt::GemmProblem decode = problem(16, 4096, 4096);
  const kt::GemmConfig narrow = swapped(sm90_config(64, 16, 12, 1));
  EXPECT_FALSE(kt::validate(decode, narrow, h200).has_value());
  EXPECT_EQ(kt::oriented_problem(decode, narrow).m, 4096);
  EXPECT_EQ(kt::oriented_problem(decode, narrow).n, 16);
  EXPECT_EQ(kt::tiles_m(decode, narrow), 64);
  EXPECT_EQ(kt::tiles_n(decode, narrow), 1);
  EXPECT_EQ(kt::plan_launch(decode, narrow, h200.num_sms).main.grid[0], 64u);
  EXPECT_NE(kt::gemm_kernel_expression(decode, narrow).find(", 1, 1, true, 1, false, true, 0>"),
            std::string::npos);
  EXPECT_NE(kt::gemm_kernel_expression(decode, sm90_config(64, 32, 12, 1))
                .find(", false, 1, false, true, 0>"),
            std::string::npos);
  // Split through L2: one slot per (tile, split) of the transposed tiles.
  const kt::GemmConfig split = swapped(sm90_config(64, 32, 12, 1, 2));
  // (40 tokens: 2 token tiles x 64 weight tiles.)
  EXPECT_EQ(kt::splitk_partial_bytes(problem(40, 4096, 4096), split), 2 * (2 * 64) * 64 * 32 * 4);

  const kt::GemmProblem nn = problem(16, 4096, 4096, kt::Layout::kNN);
  EXPECT_FALSE(kt::validate(nn, swapped(sm90_config(64, 16, 8, 1)), h200).has_value());
  EXPECT_FALSE(kt::kernel_a_k_major(nn, narrow));
  EXPECT_TRUE(kt::kernel_b_k_major(nn, narrow));
  EXPECT_TRUE(kt::kernel_a_k_major(nn, sm90_config(64, 64, 8, 1)));
  EXPECT_FALSE(kt::kernel_b_k_major(nn, sm90_config(64, 64, 8, 1)));
  EXPECT_NE(kt::gemm_kernel_expression(nn, narrow).find(", false, false, 0, 1, 1, true, 1,"),
            std::string::npos);
  kt::GemmConfig nn_deep = swapped(sm90_config(64, 16, 8, 1));
  nn_deep.tile_k = 128;
  EXPECT_FALSE(kt::validate(nn, nn_deep, h200).has_value());
  expect_rejected(nn, kt::testing::pairs_along_n(swapped(sm90_config(64, 32, 12, 1))), h200,
                  "M-major");
  expect_rejected(decode, swapped(sm90_config(64, 64, 8, 1, 1, 2)), h200, "use e0");
  EXPECT_FALSE(kt::validate(decode, swapped(sm90_config(64, 16, 8, 1, 1, 0, 2)), h200).has_value());
  kt::GemmConfig sm80 = config(64, 64, 32, 32, 32, 4, 2);
  sm80.swap_ab = true;
  expect_rejected(decode, sm80, h200, "swap-AB");

  int offered = 0;
  for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(decode, h200)) {
    if (!c.swap_ab) continue;
    EXPECT_EQ(c.epilogue, 0) << kt::to_key(c);
    EXPECT_LE(c.tile_n, 32) << kt::to_key(c);  // no tile more than twice the padded 16 tokens
    ++offered;
  }
  EXPECT_GT(offered, 0);
  int offered_nn = 0;
  for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(nn, h200))
    if (c.swap_ab) {
      EXPECT_EQ(c.cluster_n, 1) << kt::to_key(c);
      ++offered_nn;
    }
  EXPECT_GT(offered_nn, 0);
  for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(problem(2049, 4096, 4096), h200))
    EXPECT_FALSE(c.swap_ab) << kt::to_key(c);
}

// Past decode steps swap-AB takes token tiles fitted to M (cuBLASLt's 256 x 88 tiles at
// M = 257): the fullest few of ceil(M / t) rounded up to 8, direct stores; pairs along M split
// B's rows in whole swizzle atoms.
TEST(ValidateSm90Config, SwapAbPastDecodeStepsFitsTheTokenTiles) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  EXPECT_EQ(kt::sm90_fitted_token_tiles(257), (std::vector<int>{88, 136}));
  EXPECT_EQ(kt::sm90_fitted_token_tiles(1430).front(), 240);  // 6 tiles, 1440 columns
  EXPECT_EQ(kt::sm90_fitted_token_tiles(65), (std::vector<int>{72}));
  for (int m : {65, 257, 1430, 2048})
    for (int w : kt::sm90_fitted_token_tiles(m)) {
      EXPECT_EQ(w % 8, 0) << m;
      EXPECT_GE(w, 64) << m;
      EXPECT_LE(w, 256) << m;
    }
  const kt::GemmProblem mid = problem(257, 11264, 2048);
  kt::GemmConfig fitted = sm90_config(256, 88, 4, 2);
  fitted.swap_ab = true;
  EXPECT_FALSE(kt::validate(mid, fitted, h200).has_value());
  fitted.epilogue = 2;
  expect_rejected(mid, fitted, h200, "e0");
  fitted.epilogue = 0;
  fitted.cluster = 2;
  expect_rejected(mid, fitted, h200, "multiple of 16");
  int offered = 0;
  for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(mid, h200)) {
    if (!c.swap_ab) continue;
    EXPECT_EQ(c.epilogue, 0) << kt::to_key(c);
    EXPECT_TRUE(c.tile_n == 88 || c.tile_n == 136) << kt::to_key(c);
    offered += c.tile_m == 256 && c.tile_n == 88;
  }
  EXPECT_GT(offered, 0);
}

// Stages two or four swizzle atoms deep (tile_k 128, 256): nt only; two or four times the stage
// bytes in shared memory, K splits in whole stages; the search offers them for small tiles only.
TEST(ValidateSm90Config, MultiAtomStagesAreForSmallTilesOfEitherLayout) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem decode = problem(16, 4096, 4096);
  kt::GemmConfig deep = kt::testing::swapped(sm90_config(64, 16, 8, 1));
  deep.tile_k = 128;
  EXPECT_FALSE(kt::validate(decode, deep, h200).has_value());
  EXPECT_EQ(kt::to_key(deep), "sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g8.sk1.swab");
  EXPECT_EQ(kt::parse_gemm_config_key(kt::to_key(deep)), deep);
  // 8 stages of (64 + 16) rows x 256 bytes, the barriers, the alignment slack.
  EXPECT_EQ(kt::smem_bytes(decode, deep), 8 * 80 * 256 + 8 * 16 + 1024);
  EXPECT_NE(kt::gemm_kernel_expression(decode, deep).find("64, 16, 128, 8, 1, true"),
            std::string::npos);
  kt::GemmConfig split = sm90_config(128, 128, 4, 2, 3);
  split.tile_k = 128;
  EXPECT_EQ(kt::k_per_split(problem(512, 512, 1000), split), 384);
  kt::GemmConfig four = kt::testing::swapped(sm90_config(64, 16, 5, 1));
  four.tile_k = 256;
  EXPECT_FALSE(kt::validate(decode, four, h200).has_value());
  EXPECT_EQ(kt::smem_bytes(decode, four), 5 * 80 * 512 + 5 * 16 + 1024);

  // nn: an N-major B's (or swapped, an M-major A's) boxes as deep as the stage.
  kt::GemmConfig nn = sm90_config(64, 64, 6, 1);
  nn.tile_k = 128;
  EXPECT_FALSE(kt::validate(problem(64, 4096, 4096, kt::Layout::kNN), nn, h200).has_value());
  kt::GemmConfig odd = deep;
  odd.tile_k = 96;
  expect_rejected(decode, odd, h200, "64");
  // 12 stages of 20 KB do not fit.
  deep.stages = 12;
  expect_rejected(decode, deep, h200, "shared memory");

  int offered[2] = {0, 0};
  for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(decode, h200)) {
    if (c.family != kt::GemmFamily::kSm90 || c.tile_k == 64) continue;
    EXPECT_LE(c.tile_m + c.tile_n, 128) << kt::to_key(c);
    ++offered[c.tile_k == 256];
  }
  EXPECT_GT(offered[0], 0);
  EXPECT_GT(offered[1], 0);
  int nn_offered[2] = {0, 0};
  for (const kt::GemmConfig& c :
       kt::enumerate_gemm_configs(problem(64, 4096, 4096, kt::Layout::kNN), h200)) {
    if (c.family != kt::GemmFamily::kSm90 || c.tile_k == 64) continue;
    EXPECT_LE(c.tile_m + c.tile_n, 128) << kt::to_key(c);
    ++nn_offered[c.swap_ab];
  }
  EXPECT_GT(nn_offered[0], 0);  // 64 x 64 with an N-major B
  EXPECT_GT(nn_offered[1], 0);  // swapped, with an M-major A
}

TEST(ValidateSm90Config, TheTmaStoreEpilogueNeedsSixteenByteRowsOfC) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmConfig e2 = sm90_config(128, 128, 4, 2, 1, 2);
  EXPECT_FALSE(kt::validate(problem(127, 136, 72), e2, h200).has_value());
  // N = 129 bf16: 258-byte rows; the direct-store epilogue takes it.
  expect_rejected(problem(127, 129, 72), e2, h200, "16-byte row strides of C");
  EXPECT_FALSE(kt::validate(problem(127, 129, 72), sm90_config(128, 128, 4, 2), h200).has_value());
  // FP32 C: N % 4 == 0 suffices.
  EXPECT_FALSE(
      kt::validate(problem(127, 132, 72, kt::Layout::kNT, kt::DType::kBF16, kt::DType::kFP32), e2,
                   h200)
          .has_value());
  // Split-K reduces in the kernel, then stores C like an unsplit unit: any epilogue.
  EXPECT_FALSE(
      kt::validate(problem(1536, 1536, 8192), sm90_config(128, 192, 4, 2, 4, 2), h200).has_value());
  // A 128-column bf16 tile has two 64-column slabs.
  expect_rejected(problem(4096, 4096, 4096), sm90_config(128, 128, 4, 2, 1, 4), h200, "slabs");
  // The slabs count against shared memory: 4 x 48 KB stages + 64 KB of a 128 x 256 tile do not
  // fit, 3 stages do; 4 stages with half the tile staged do.
  expect_rejected(problem(4096, 4096, 4096), sm90_config(128, 256, 4, 2, 1, 4), h200,
                  "shared memory");
  EXPECT_FALSE(
      kt::validate(problem(4096, 4096, 4096), sm90_config(128, 256, 3, 2, 1, 4), h200).has_value());
  EXPECT_FALSE(kt::validate(problem(4096, 4096, 4096), sm90_config(128, 256, 4, 2, 1, 2, 2), h200)
                   .has_value());
  expect_rejected(problem(4096, 4096, 4096), sm90_config(128, 256, 4, 2, 1, 0, 3), h200, "cluster");
  // sm80 configs carry none of these fields.
  kt::GemmConfig sm80 = config(128, 128, 32, 64, 64, 4);
  sm80.cluster = 2;
  expect_rejected(problem(4096, 4096, 4096), sm80, h200, "cluster");
}

TEST(PlanLaunch, Sm90ClustersOfTwoPairTileRowsAndLaunchWholeClusters) {
  const kt::GemmConfig c = sm90_config(128, 256, 4, 2, 1, 2, 2);
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  EXPECT_EQ(kt::cluster_units(p, c), 16 * 16);
  const kt::GemmLaunch launch = kt::plan_launch(p, c, 132);
  EXPECT_EQ(launch.main.grid[0], 132u);
  EXPECT_EQ(launch.main.cluster[0], 2u);
  // 3 tile rows x 2 tile columns: 2 cluster rows (the second CTA of the last has no tile).
  const kt::GemmProblem odd = problem(300, 512, 1024);
  EXPECT_EQ(kt::cluster_units(odd, c), 2 * 2);
  EXPECT_EQ(kt::plan_launch(odd, c, 132).main.grid[0], 8u);
  // An odd SM count still launches whole clusters.
  EXPECT_EQ(kt::plan_launch(p, c, 131).main.grid[0], 130u);
}

TEST(PlanLaunch, Sm90IsPersistentOverTilesTimesSplits) {
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  const kt::GemmConfig c = sm90_config(128, 256, 4, 2);
  EXPECT_EQ(kt::work_units(p, c), 32 * 16);
  const kt::GemmLaunch launch = kt::plan_launch(p, c, 132);
  EXPECT_EQ(launch.main.grid[0], 132u);
  EXPECT_EQ(launch.main.block[0], 384u);
  EXPECT_EQ(launch.main.smem_bytes, std::uint32_t(kt::smem_bytes(p, c)));
  // Without an SM count, one CTA per unit; fewer units than SMs, one CTA each.
  EXPECT_EQ(kt::plan_launch(p, c).main.grid[0], 512u);
  EXPECT_EQ(kt::plan_launch(problem(256, 256, 4096), c, 132).main.grid[0], 2u);
  // Split-K multiplies the units and reduces in the kernel: no reduce launch; the workspace is
  // the flag region plus a tile slot for each (tile, split).
  const kt::GemmConfig split = sm90_config(128, 128, 4, 2, 4);
  const kt::GemmLaunch split_launch = kt::plan_launch(problem(256, 256, 32768), split, 132);
  EXPECT_EQ(split_launch.main.grid[0], 16u);
  EXPECT_FALSE(split_launch.reduce.has_value());
  EXPECT_EQ(split_launch.workspace_bytes, kt::kGemmFlagRegionBytes + 4 * 4 * 128 * 128 * 4);
}

TEST(Workspace, Sm90SplitKHoldsFlagsThenOneTileSlotPerSplit) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  // 512 x 512 x 32768 at 128 x 256, 16 splits: 8 tiles x 16 splits x 128 KB (16 MB; every split
  // writes a slot in the distributed mode), 8 x 15 x 2 ready flags after the two counters' line
  // (the distributed mode's last-split flags come on top, checked in the kernel).
  const kt::GemmProblem p = problem(512, 512, 32768);
  const kt::GemmConfig sk16 = sm90_config(128, 256, 4, 2, 16);
  EXPECT_EQ(kt::splitk_partial_bytes(p, sk16), 16LL * 8 * 128 * 256 * 4);
  EXPECT_EQ(kt::workspace_bytes(p, sk16, 132), kt::kGemmFlagRegionBytes + 16LL * 8 * 128 * 256 * 4);
  EXPECT_EQ(kt::sm90_splitk_flag_words(p, sk16), 32 + 15 * 8 * 2);
  // Ragged: tiles cover the padded shape; one consumer, one flag per (tile, split).
  const kt::GemmProblem ragged = problem(300, 520, 4104);
  const kt::GemmConfig one = sm90_config(64, 128, 6, 1, 3);
  EXPECT_EQ(kt::splitk_partial_bytes(ragged, one), 3LL * (5 * 5) * 64 * 128 * 4);
  EXPECT_EQ(kt::sm90_splitk_flag_words(ragged, one), 32 + 2 * 25);
  // No split, no workspace; the other families keep whole M x N slices after the flag region.
  EXPECT_EQ(kt::workspace_bytes(p, sm90_config(128, 256, 4, 2), 132), 0);
  EXPECT_EQ(kt::sm90_splitk_flag_words(p, sm90_config(128, 256, 4, 2)), 0);
  EXPECT_EQ(kt::splitk_partial_bytes(p, config(128, 128, 32, 64, 64, 4, 8)), 8LL * 512 * 512 * 4);
  EXPECT_EQ(kt::sm90_splitk_flag_words(p, config(128, 128, 32, 64, 64, 4, 8)), 0);
  // More ready flags than the region holds: rejected.
  const kt::GemmProblem big = problem(16384, 16384, 8192);
  expect_rejected(big, sm90_config(128, 128, 4, 2, 2), h200, "flag");
  EXPECT_FALSE(kt::validate(problem(4096, 4096, 4096), sm90_config(128, 256, 4, 2, 16), h200));
}

// Stream-K (sm90 only): no split-K, cluster or swap-AB beside it; the whole units fill whole
// waves and the rest is shared out by K (stream_k_region); the grid is every SM, and the
// workspace holds the flag region and a partial tile per CTA.
TEST(ValidateSm90Config, StreamKIsAnSm90FieldWithoutSplitsClustersOrSwap) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  using kt::testing::streamed;
  const kt::GemmProblem p = problem(8192, 8192, 8192);
  EXPECT_FALSE(kt::validate(p, streamed(sm90_config(128, 256, 4, 2, 1, 2)), h200).has_value());
  expect_rejected(p, streamed(sm90_config(128, 256, 4, 2, 2)), h200, "stream-K");
  expect_rejected(p, streamed(sm90_config(128, 256, 4, 2, 1, 2, 2)), h200, "stream-K");
  expect_rejected(p, streamed(kt::testing::pairs_along_n(sm90_config(128, 128, 4, 2))), h200,
                  "stream-K");
  const kt::GemmConfig swapped = kt::testing::swapped(sm90_config(64, 32, 8, 1));
  expect_rejected(problem(64, 4096, 4096), streamed(swapped), h200, "stream-K");
  expect_rejected(p, streamed(config(128, 128, 32, 64, 64, 4)), h200, "sm90");
  // An owner adds its peers' 128 KB FP32 partial tiles over the ring: two stages of 48 KB are too
  // few, three enough.
  expect_rejected(p, streamed(sm90_config(128, 256, 2, 2)), h200, "use more stages");
  EXPECT_FALSE(kt::validate(p, streamed(sm90_config(128, 256, 3, 2)), h200).has_value());
  EXPECT_NE(kt::gemm_kernel_expression(p, streamed(sm90_config(128, 256, 4, 2, 1, 2)))
                .find(", false, 1, true, true, 0>"),
            std::string::npos);
}

TEST(ValidateSm90Config, WithoutWarpSpecializationIsAnSm90FieldWithoutSplitsClustersOrSwap) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  using kt::testing::unspecialized;
  const kt::GemmProblem p = problem(4096, 4096, 4096);
  EXPECT_FALSE(kt::validate(p, unspecialized(sm90_config(128, 256, 4, 2, 1, 2)), h200));
  EXPECT_FALSE(kt::validate(p, unspecialized(sm90_config(64, 128, 6, 1)), h200));
  expect_rejected(p, unspecialized(sm90_config(128, 256, 4, 2, 2)), h200, "nows");
  expect_rejected(p, unspecialized(sm90_config(128, 256, 4, 2, 1, 2, 2)), h200, "nows");
  expect_rejected(p, unspecialized(kt::testing::streamed(sm90_config(128, 256, 4, 2))), h200,
                  "nows");
  expect_rejected(p, unspecialized(kt::testing::pairs_along_n(sm90_config(128, 128, 4, 2))), h200,
                  "nows");
  expect_rejected(p, unspecialized(kt::testing::sm90_cluster_split_config(128, 128, 4, 2, 2)), h200,
                  "nows");
  expect_rejected(problem(64, 4096, 4096),
                  unspecialized(kt::testing::swapped(sm90_config(64, 32, 8, 1))), h200, "nows");
  expect_rejected(p, unspecialized(config(128, 128, 32, 64, 64, 4)), h200, "sm90 field");
  // Two consumers and no producer: 256 threads under no setmaxnreg, so a thread's registers are
  // its accumulators and addressing, not the 384-thread split's 168.
  const kt::GemmConfig c = unspecialized(sm90_config(128, 256, 4, 2, 1, 2));
  EXPECT_EQ(kt::plan_launch(p, c, 132).main.block[0], 256u);
  EXPECT_EQ(kt::estimated_registers(c), 128 + 40);
  EXPECT_EQ(kt::smem_bytes(p, c), kt::smem_bytes(p, sm90_config(128, 256, 4, 2, 1, 2)));
  EXPECT_NE(kt::gemm_kernel_expression(p, c).find(", false, 1, false, false, 0>"),
            std::string::npos);
  EXPECT_NE(kt::gemm_kernel_expression(p, sm90_config(128, 256, 4, 2)).find(", true, 0>"),
            std::string::npos);
}

TEST(Enumerate, WithoutWarpSpecializationBesideEachUnsplitUnclusteredTile) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const std::vector<kt::GemmConfig> all =
      kt::enumerate_gemm_configs(problem(4096, 4096, 4096), h200);
  std::set<std::string> keys;
  for (const kt::GemmConfig& c : all) keys.insert(kt::to_key(c));
  int unspecialized = 0;
  for (const kt::GemmConfig& c : all) {
    if (c.warp_specialized) continue;
    ++unspecialized;
    EXPECT_TRUE(c.split_k == 1 && c.cluster == 1 && !c.stream_k && !c.swap_ab) << kt::to_key(c);
    kt::GemmConfig specialized = c;
    specialized.warp_specialized = true;
    EXPECT_EQ(keys.count(kt::to_key(specialized)), 1u) << kt::to_key(c);
  }
  EXPECT_GT(unspecialized, 20);
}

TEST(StreamKRegion, TheLastPartialWaveOrThatPlusAWaveSharedOutByK) {
  using kt::testing::streamed;
  const kt::GemmConfig c = streamed(sm90_config(128, 256, 4, 2, 1, 2));
  // 8192^3: 2048 tiles on 132 CTAs = 15 waves + 68 tiles (over half a wave): those 68 tiles'
  // 128 k-tiles each, 66 a CTA.
  kt::StreamKRegion r = kt::stream_k_region(problem(8192, 8192, 8192), c, 132);
  EXPECT_EQ(r.units, 68);
  EXPECT_EQ(r.iters, 66);
  // 4096 x 3840: 480 tiles = 3 waves + 84; K = 4096 is 64 k-tiles: 84 x 64 / 132 -> 41.
  r = kt::stream_k_region(problem(4096, 3840, 4096), c, 132);
  EXPECT_EQ(r.units, 84);
  EXPECT_EQ(r.iters, 41);
  // 2176 x 1024 at 128 x 128: 136 tiles = 1 wave + 4, under half a wave: a whole wave joins
  // them, 136 x 16 k-tiles (K = 1000, the last one short) over 132 CTAs -> 17, over one tile.
  const kt::GemmConfig narrow = streamed(sm90_config(128, 128, 5, 2, 1, 2));
  r = kt::stream_k_region(problem(2176, 1024, 1000), narrow, 132);
  EXPECT_EQ(r.units, 136);
  EXPECT_EQ(r.iters, 17);
  // Fewer units than CTAs: all of them (1536^2 at 128 x 256: 72 tiles x 128 k-tiles / 132).
  r = kt::stream_k_region(problem(1536, 1536, 8192), c, 132);
  EXPECT_EQ(r.units, 72);
  EXPECT_EQ(r.iters, 70);
  // Whole waves (4224 x 4096: 528 tiles = 4 x 132), or no stream-K: none.
  EXPECT_EQ(kt::stream_k_region(problem(4224, 4096, 4096), c, 132).units, 0);
  EXPECT_EQ(kt::stream_k_region(problem(8192, 8192, 8192), sm90_config(128, 256, 4, 2), 132).units,
            0);
}

TEST(StreamKRegion, LaunchesEverySmWithAPartialTileSlotEach) {
  using kt::testing::streamed;
  const kt::GemmConfig c = streamed(sm90_config(128, 256, 4, 2, 1, 2));
  const kt::GemmProblem p = problem(1536, 1536, 8192);  // 72 tiles
  const kt::GemmLaunch launch = kt::plan_launch(p, c, 132);
  EXPECT_EQ(launch.main.grid[0], 132u);
  EXPECT_EQ(launch.workspace_bytes, kt::kGemmFlagRegionBytes + 132LL * 128 * 256 * 4);
  EXPECT_EQ(kt::workspace_bytes(p, c, 132), launch.workspace_bytes);
  // Without stream-K the grid stops at the units.
  EXPECT_EQ(kt::plan_launch(p, sm90_config(128, 256, 4, 2, 1, 2), 132).main.grid[0], 72u);
  // The stripe and publish mbarriers: 32 bytes more than the same config unstreamed.
  EXPECT_EQ(kt::smem_bytes(p, c), kt::smem_bytes(p, sm90_config(128, 256, 4, 2, 1, 2)) + 32);
}

TEST(Enumerate, StreamKOnlyWhereTheLastWaveIsPartlyEmpty) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  auto streamed_count = [&](const kt::GemmProblem& p) {
    const std::vector<kt::GemmConfig> all = kt::enumerate_gemm_configs(p, h200);
    return std::count_if(all.begin(), all.end(), [&](const kt::GemmConfig& c) {
      if (!c.stream_k) return false;
      EXPECT_GT(kt::stream_k_region(p, c, h200.num_sms).units, 0) << kt::to_key(c);
      EXPECT_TRUE(c.split_k == 1 && c.cluster == 1 && !c.swap_ab) << kt::to_key(c);
      return true;
    });
  };
  EXPECT_GT(streamed_count(problem(8192, 8192, 8192)), 10);
  // 4224 x 4096 at 128 x 256 is 528 tiles, four whole waves: that tile is not streamed there.
  const kt::GemmProblem whole = problem(4224, 4096, 4096);
  for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(whole, h200)) {
    if (c.stream_k) {
      EXPECT_FALSE(c.tile_m == 128 && c.tile_n == 256) << kt::to_key(c);
    }
  }
}

TEST(ValidateSmallMConfig, ServesMUpTo64WithSixteenByteRowsOnAmpereAndLater) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmConfig c = kt::small_m_config(16, 64, 64, 64, 4);
  EXPECT_FALSE(kt::validate(problem(1, 4096, 4096), c, h200).has_value());
  EXPECT_FALSE(kt::validate(problem(64, 4096, 4096), c, h200).has_value());
  EXPECT_FALSE(kt::validate(problem(3, 129, 72), c, h200).has_value());
  EXPECT_FALSE(kt::validate(problem(3, 136, 72, kt::Layout::kNN), c, h200).has_value());
  EXPECT_FALSE(kt::validate(problem(16, 4096, 4096), c, kt::device_profile("a100")).has_value());
  expect_rejected(problem(65, 4096, 4096), c, h200, "M <= 64");
  expect_rejected(problem(16, 4096, 4100), c, h200, "16-byte");
  expect_rejected(problem(16, 4100, 4096, kt::Layout::kNN), c, h200, "16-byte");
  kt::DeviceDesc volta = h200;
  volta.cc_major = 7;
  expect_rejected(problem(16, 4096, 4096), c, volta, "8.0");
}

TEST(ValidateSmallMConfig, RejectsPointsOutsideTheTemplate) {
  const kt::DeviceDesc& h200 = kt::device_profile("h200");
  const kt::GemmProblem nt = problem(16, 4096, 4096);
  const kt::GemmProblem nn = problem(16, 4096, 4096, kt::Layout::kNN);
  expect_rejected(nt, kt::small_m_config(24, 64, 64, 64, 4), h200, "tile_m");
  expect_rejected(nt, kt::small_m_config(16, 64, 64, 48, 4), h200, "warp_n");
  expect_rejected(nn, kt::small_m_config(16, 64, 64, 32, 4), h200, "warp_n must be 64 for nn");
  expect_rejected(nt, kt::small_m_config(16, 96, 64, 32, 4), h200, "tile_n");
  expect_rejected(nt, kt::small_m_config(16, 64, 64, 64, 3), h200, "warps_k");
  expect_rejected(nt, kt::small_m_config(16, 512, 64, 64, 4), h200, "warps per CTA");
  expect_rejected(nt, kt::small_m_config(16, 64, 16, 64, 4), h200, "tile_k");
  expect_rejected(nt, kt::small_m_config(16, 64, 128, 64, 4), h200, "loads");
  expect_rejected(nt, kt::small_m_config(64, 64, 32, 64, 4), h200, "accumulators");
  kt::GemmConfig grouped = kt::small_m_config(16, 64, 64, 64, 4);
  grouped.raster_group = 8;
  expect_rejected(nt, grouped, h200, "raster_group");
  // nn takes half the K depth per batch (16-row chunks).
  EXPECT_FALSE(kt::validate(nn, kt::small_m_config(16, 64, 16, 64, 4), h200).has_value());
}

TEST(PlanLaunch, SmallMHasOneCtaPerTileAndSplitWithPartialSumsInSharedMemory) {
  const kt::GemmProblem p = problem(17, 4100, 4096);
  const kt::GemmConfig c = kt::small_m_config(16, 128, 64, 64, 4, 2);
  ASSERT_FALSE(kt::validate(p, c, kt::device_profile("h200")).has_value());
  const kt::GemmLaunch launch = kt::plan_launch(p, c, 132);
  EXPECT_EQ(launch.main.grid[0], 2u * 33u);  // M tiles (fastest) x N tiles
  EXPECT_EQ(launch.main.grid[2], 2u);
  EXPECT_EQ(launch.main.block[0], 32u * 2 * 4);
  EXPECT_EQ(launch.main.smem_bytes, 3u * 16 * 128 * 4);
  ASSERT_TRUE(launch.reduce.has_value());
  EXPECT_EQ(launch.workspace_bytes, kt::kGemmFlagRegionBytes + 2 * 17 * 4100 * 4);
  EXPECT_EQ(kt::k_per_split(p, c), 2048);
  EXPECT_EQ(kt::plan_launch(p, kt::small_m_config(16, 128, 64, 64, 1)).main.smem_bytes, 0u);
  EXPECT_EQ(kt::gemm_kernel_expression(p, c),
            "kt::gemm_small_m<kt::bf16, kt::bf16, 16, 64, 2, 4, 64, true, true>");
}

TEST(EnumerateGemmConfigs, OffersTheSmallMFamilyExactlyWhenMIsAtMost64) {
  for (const std::string& name : {std::string("a100"), std::string("h200")})
    for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
      for (std::int64_t m : {1, 16, 17, 64, 65, 128}) {
        const kt::GemmProblem p = problem(m, 4096, 4096, layout);
        const auto configs = kt::enumerate_gemm_configs(p, kt::device_profile(name));
        const auto small = std::count_if(
            configs.begin(), configs.end(),
            [](const kt::GemmConfig& c) { return c.family == kt::GemmFamily::kSmallM; });
        if (m <= 64) {
          EXPECT_GT(small, 0) << kt::to_key(p) << " on " << name;
        } else {
          EXPECT_EQ(small, 0) << kt::to_key(p) << " on " << name;
        }
      }
  kt::GemmDomains without;
  without.families = {kt::GemmFamily::kSm80};
  for (const kt::GemmConfig& c :
       kt::enumerate_gemm_configs(problem(16, 4096, 4096), kt::device_profile("h200"), without))
    EXPECT_NE(c.family, kt::GemmFamily::kSmallM);
}

TEST(EnumerateGemmConfigs, SplitsKBeyond16OnlyForTheSm80FamilysElementLoads) {
  // nn with N % 8 != 0: B's rows are unaligned, so the sm80 family loads it element by element
  // and gets up to 64 splits; the same shape in nt streams both operands and stops at 16.
  const auto max_split = [](const kt::GemmProblem& p, kt::GemmFamily family) {
    int most = 0;
    for (const kt::GemmConfig& c : kt::enumerate_gemm_configs(p, kt::device_profile("h200")))
      if (c.family == family) most = std::max(most, c.split_k);
    return most;
  };
  const kt::GemmProblem unaligned = problem(108, 124, 32768, kt::Layout::kNN);
  const kt::GemmProblem aligned = problem(108, 124, 32768, kt::Layout::kNT);
  ASSERT_FALSE(unaligned.vector_aligned());
  ASSERT_TRUE(aligned.vector_aligned());
  EXPECT_EQ(max_split(unaligned, kt::GemmFamily::kSm80), 64);
  EXPECT_EQ(max_split(aligned, kt::GemmFamily::kSm80), 16);
  EXPECT_EQ(max_split(aligned, kt::GemmFamily::kSm90), 16);
}

TEST(EnumerateGemmConfigs, ReturnsOnlyConfigsValidateAccepts) {
  const kt::GemmDomains domains;
  auto in = [](const std::vector<int>& domain, int v) {
    return std::find(domain.begin(), domain.end(), v) != domain.end();
  };
  const std::int64_t shapes[][3] = {
      {1, 1, 1}, {127, 129, 65}, {4096, 4096, 4096}, {16, 4096, 4096}};
  for (const std::string& name : {std::string("a100"), std::string("h200")}) {
    const kt::DeviceDesc& device = kt::device_profile(name);
    for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
      for (const auto& s : shapes) {
        const kt::GemmProblem p = problem(s[0], s[1], s[2], layout);
        SCOPED_TRACE(kt::to_key(p) + " on " + name);
        const std::vector<kt::GemmConfig> configs = kt::enumerate_gemm_configs(p, device);
        std::set<std::string> keys;
        for (const kt::GemmConfig& c : configs) {
          const auto why = kt::validate(p, c, device);
          EXPECT_FALSE(why.has_value()) << kt::to_key(c) << ": " << why.value_or("");
          const bool family_fields =
              c.family == kt::GemmFamily::kSmallM
                  ? in(domains.small_m_tile_m, c.tile_m) && in(domains.small_m_warp_n, c.warp_n) &&
                        in(domains.small_m_warps_n, c.tile_n / c.warp_n) &&
                        in(domains.small_m_warps_k, c.warps_k) &&
                        in(domains.small_m_tile_k, c.tile_k) && c.raster_group == 1
              : c.family == kt::GemmFamily::kSm90
                  ? in(domains.sm90_tile_m, c.tile_m) &&
                        (c.swap_ab ? in(p.m <= kt::kSm90SwapMaxM ? domains.sm90_swap_tile_n
                                                                 : kt::sm90_fitted_token_tiles(p.m),
                                        c.tile_n)
                                   : in(domains.sm90_tile_n, c.tile_n)) &&
                        (c.tile_k == 64 ||
                         (in(domains.sm90_deep_tile_k, c.tile_k) &&
                          c.tile_m + c.tile_n <= domains.sm90_deep_stage_max_rows)) &&
                        c.warp_m == 0 && c.warp_n == 0 && in(domains.sm90_stages, c.stages) &&
                        in(domains.sm90_consumers, c.consumers) &&
                        in(domains.sm90_epilogue, c.epilogue) && in(domains.sm90_cluster, c.cluster)
                  : in(domains.tile_m, c.tile_m) && in(domains.tile_n, c.tile_n) &&
                        in(domains.tile_k, c.tile_k) && in(domains.warp_m, c.warp_m) &&
                        in(domains.warp_n, c.warp_n) && in(domains.stages, c.stages) &&
                        c.consumers == 0 && c.epilogue == 0 && c.cluster == 1 && c.warps_k == 0;
          EXPECT_TRUE(family_fields && in(domains.raster_group, c.raster_group) &&
                      in(domains.split_k, c.split_k))
              << kt::to_key(c) << " is outside GemmDomains";
          // The small-M family serves M <= 64 only.
          if (c.family == kt::GemmFamily::kSmallM) {
            EXPECT_LE(p.m, 64);
          }
          // The sm90 family runs on sm_90a devices only.
          if (c.family == kt::GemmFamily::kSm90) {
            EXPECT_EQ(device.arch(), "sm_90a");
          }
          keys.insert(kt::to_key(c));
        }
        EXPECT_EQ(keys.size(), configs.size()) << "duplicate configs";
      }
  }
}

TEST(EnumerateGemmConfigs, NonEmptyForEveryValidProblem) {
  const std::int64_t shapes[][3] = {
      {1, 1, 1}, {127, 129, 65}, {4096, 4096, 4096}, {16, 4096, 4096}};
  for (const std::string& name : {std::string("a100"), std::string("h200")})
    for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN})
      for (const auto& s : shapes) {
        const kt::GemmProblem p = problem(s[0], s[1], s[2], layout);
        // nn needs tile_n >= 64 however small N is; pruning must not drop those tiles.
        EXPECT_FALSE(kt::enumerate_gemm_configs(p, kt::device_profile(name)).empty())
            << kt::to_key(p) << " on " << name;
      }
}

TEST(EnumerateGemmConfigs, HonoursNarrowedDomains) {
  kt::GemmDomains only;
  only.families = {kt::GemmFamily::kSm80};
  only.tile_m = {128};
  only.tile_n = {128};
  only.tile_k = {32};
  only.warp_m = {64};
  only.warp_n = {64};
  only.stages = {4};
  only.raster_group = {8};
  only.split_k = {1};
  const auto configs =
      kt::enumerate_gemm_configs(problem(4096, 4096, 4096), kt::device_profile("h200"), only);
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(kt::to_key(configs[0]), "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1");
}

TEST(GemmProblem, VectorAlignedWhenEveryOperandRowIs16ByteAligned) {
  // A row of A is K elements of 2 bytes; of B, K (nt) or N (nn) elements. Rows start 16-byte
  // aligned exactly when those row lengths are multiples of 16 bytes; the sm80 kernel takes each
  // operand's flag (vector or element loads) on its own.
  const std::int64_t dims[] = {1, 8, 12, 16, 4095, 4096, 4100, 4104};
  for (std::int64_t n : dims)
    for (std::int64_t k : dims)
      for (kt::Layout layout : {kt::Layout::kNT, kt::Layout::kNN}) {
        const kt::GemmProblem p = problem(64, n, k, layout);
        const std::int64_t b_row_elems = layout == kt::Layout::kNT ? k : n;
        const bool a_rows = (k * 2) % 16 == 0, b_rows = (b_row_elems * 2) % 16 == 0;
        EXPECT_EQ(p.a_vector_aligned(), a_rows) << kt::to_key(p);
        EXPECT_EQ(p.b_vector_aligned(), b_rows) << kt::to_key(p);
        EXPECT_EQ(p.vector_aligned(), a_rows && b_rows) << kt::to_key(p);
        EXPECT_NE(
            kt::gemm_kernel_expression(p, config(64, 64, 64, 32, 32, 4))
                .find(fmt::format("{}, {}, {}, false>", layout == kt::Layout::kNT, a_rows, b_rows)),
            std::string::npos)
            << kt::to_key(p);
      }
}

TEST(Sha256, MatchesFipsTestVectors) {
  EXPECT_EQ(kt::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(kt::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 448 bits: the padding no longer fits the first block.
  EXPECT_EQ(kt::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(kt::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalUpdatesEqualOneShot) {
  // One million 'a' fed in uneven pieces that straddle the 64-byte block boundary.
  kt::Sha256 h;
  std::size_t fed = 0;
  for (std::size_t size = 1; fed < 1000000; size = size % 131 + 7) {
    const std::size_t take = std::min(size, 1000000 - fed);
    h.update(std::string(take, 'a'));
    fed += take;
  }
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FieldsAreLengthPrefixedSoBoundariesMatter) {
  kt::Sha256 ab_c, a_bc;
  ab_c.update_field("ab");
  ab_c.update_field("c");
  a_bc.update_field("a");
  a_bc.update_field("bc");
  EXPECT_NE(ab_c.hex_digest(), a_bc.hex_digest());
}
