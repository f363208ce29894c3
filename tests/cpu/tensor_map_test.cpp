// TMA's addressing rules (runtime/tensor_map.hpp), checked before any tensor map is encoded: a
// 16-byte aligned base and byte strides that are multiples of 16 below 2^40, named in the reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/tensor_map.hpp"

namespace kt::rt {
namespace {

constexpr std::string_view kNames[3] = {"row", "head", "batch"};

std::string reason(std::uintptr_t base, std::uint64_t row, std::uint64_t head,
                   std::uint64_t batch) {
  const std::uint64_t strides[3] = {row, head, batch};
  return tma_addressing_error(reinterpret_cast<const void*>(base), strides, kNames).value_or("ok");
}

TEST(TmaAddressing, DenseBf16AttentionLayoutsAreAddressable) {
  // (B, N, H, d) and (B, H, N, d) with d = 64, H = 8, N = 1000, 2-byte elements.
  EXPECT_EQ(reason(0x10000, 8 * 64 * 2, 64 * 2, 1000 * 8 * 64 * 2), "ok");
  EXPECT_EQ(reason(0x10000, 64 * 2, 1000 * 64 * 2, 8 * 1000 * 64 * 2), "ok");
}

TEST(TmaAddressing, NamesTheMisalignedBaseOrStride) {
  EXPECT_NE(reason(0x10008, 256, 128, 1 << 20).find("base address"), std::string::npos);
  EXPECT_NE(reason(0x10000, 1000, 128, 1 << 20).find("row stride of 1000 bytes"),
            std::string::npos);
  EXPECT_NE(reason(0x10000, 256, 136, 1 << 20).find("head stride of 136 bytes"), std::string::npos);
  EXPECT_NE(reason(0x10000, 256, 128, std::uint64_t(1) << 40).find("batch stride"),
            std::string::npos);
}

}  // namespace
}  // namespace kt::rt
