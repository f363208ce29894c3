// Encoding TMA tensor maps through the driver.
#include "runtime/tensor_map.hpp"

#include <fmt/format.h>

#include <array>

#include "runtime/cuda_driver.hpp"

namespace kt::rt {

static_assert(sizeof(TmaDescriptor) == sizeof(CUtensorMap) &&
                  alignof(TmaDescriptor) == alignof(CUtensorMap),
              "TmaDescriptor must have CUtensorMap's size and alignment");

namespace {

constexpr std::uint64_t kTmaAlignBytes = 16;
constexpr std::uint64_t kTmaStrideLimit = std::uint64_t(1) << 40;
constexpr std::size_t kTmaMaxRank = 5;

}  // namespace

std::optional<std::string> tma_addressing_error(const void* base,
                                                std::span<const std::uint64_t> byte_strides,
                                                std::span<const std::string_view> stride_names) {
  if (reinterpret_cast<std::uintptr_t>(base) % kTmaAlignBytes != 0)
    return fmt::format("its base address {} is not 16-byte aligned", base);
  for (std::size_t i = 0; i < byte_strides.size(); ++i)
    if (byte_strides[i] % kTmaAlignBytes != 0 || byte_strides[i] >= kTmaStrideLimit)
      return fmt::format(
          "its {} stride of {} bytes is not a multiple of 16 below 2^40",
          i < stride_names.size() ? stride_names[i] : "dimension " + std::to_string(i + 1),
          byte_strides[i]);
  return std::nullopt;
}

CUresult encode_tensor_map(TmaDescriptor& map, DType dtype, const void* base,
                           std::span<const std::uint64_t> dims,
                           std::span<const std::uint64_t> byte_strides,
                           std::span<const std::uint32_t> box, TmaSwizzle swizzle) {
  const std::size_t rank = dims.size();
  if (rank == 0 || rank > kTmaMaxRank || byte_strides.size() + 1 != rank || box.size() != rank)
    return CUDA_ERROR_INVALID_VALUE;
  std::array<cuuint64_t, kTmaMaxRank> global_dims{}, strides{};
  std::array<cuuint32_t, kTmaMaxRank> box_dims{}, element_strides{};
  for (std::size_t i = 0; i < rank; ++i) {
    global_dims[i] = dims[i];
    box_dims[i] = box[i];
    element_strides[i] = 1;
    if (i + 1 < rank) strides[i] = byte_strides[i];
  }
  const CUtensorMapDataType type = dtype == DType::kBF16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : dtype == DType::kFP16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  return driver().tensor_map_encode_tiled(
      reinterpret_cast<CUtensorMap*>(&map), type, cuuint32_t(rank), const_cast<void*>(base),
      global_dims.data(), strides.data(), box_dims.data(), element_strides.data(),
      CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle == TmaSwizzle::k128B ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace kt::rt
