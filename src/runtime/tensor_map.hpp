// TMA tensor maps for the sm90 templates (GEMM sm90, attention fa3): one encoder over
// cuTensorMapEncodeTiled, and the addressing rules TMA puts on a tensor.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/tma_descriptor.h"
#include "core/types.hpp"

namespace kt::rt {

// Why TMA cannot address a tensor at `base` with these byte strides (of dimensions 1 and up,
// named by stride_names): the base must be 16-byte aligned and each stride a multiple of 16
// below 2^40. nullopt when it can.
std::optional<std::string> tma_addressing_error(const void* base,
                                                std::span<const std::uint64_t> byte_strides,
                                                std::span<const std::string_view> stride_names);

// How a box lies in shared memory: in the 128B swizzle (boxes 128 bytes wide), or row-major.
enum class TmaSwizzle { k128B, kNone };

// A tensor of dims.size() dimensions (innermost first, dims[0] contiguous; byte_strides holds
// dimensions 1 and up) as a TMA map, moved in boxes of `box` elements to or from shared memory
// laid out as `swizzle` says; loads read zeros outside the tensor, stores skip it. Returns the
// driver's result.
CUresult encode_tensor_map(TmaDescriptor& map, DType dtype, const void* base,
                           std::span<const std::uint64_t> dims,
                           std::span<const std::uint64_t> byte_strides,
                           std::span<const std::uint32_t> box,
                           TmaSwizzle swizzle = TmaSwizzle::k128B);

}  // namespace kt::rt
