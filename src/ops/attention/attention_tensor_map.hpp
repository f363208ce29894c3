// TMA maps of attention tensors as the sm90 families of the attention ops read and write them:
// element strides {batch, row, head} with head_dim contiguous, mapped as 4D {head_dim, seqlen,
// heads, batch} tensors in 128B-swizzled boxes of 64 head_dim columns (one swizzle row) by `rows`.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/tma_descriptor.h"
#include "core/attention_problem.hpp"

namespace kt::rt {

// Why TMA cannot map a tensor of `p` at `base` with these element strides {batch, row, head}
// (its base must be 16-byte aligned and each stride a multiple of 16 bytes below 2^40), or
// nullopt when it can.
std::optional<std::string> attention_map_error(const AttentionProblem& p, const void* base,
                                               const std::int64_t (&strides)[3]);

// Encodes tensor `name` of `p` (p.dtype, p.head_dim, p.batch; `seqlen` rows of `heads` heads)
// into `map`, in boxes of {64, rows, 1, 1}. Throws kt::Error (invalid argument) naming the
// tensor and the rule when attention_map_error has a reason; returns the driver's result.
CUresult encode_attention_map(TmaDescriptor& map, const char* name, const AttentionProblem& p,
                              const void* base, const std::int64_t (&strides)[3],
                              std::int64_t seqlen, std::int64_t heads, std::uint32_t rows);

}  // namespace kt::rt
