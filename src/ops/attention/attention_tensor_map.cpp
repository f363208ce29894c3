// Attention tensors as 4D TMA maps (attention_tensor_map.hpp).
#include "ops/attention/attention_tensor_map.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "core/error.hpp"
#include "runtime/tensor_map.hpp"

namespace kt::rt {

namespace {

constexpr std::uint32_t kBoxColumns = 64;  // one 128-byte swizzle row of 16-bit elements

// An attention tensor's element strides {batch, row, head} as the byte strides of the 4D TMA map
// {head_dim, seqlen, heads, batch}: row, head, batch.
std::array<std::uint64_t, 3> map_byte_strides(const AttentionProblem& p,
                                              const std::int64_t (&strides)[3]) {
  const std::uint64_t e = std::uint64_t(size_bytes(p.dtype));
  return {std::uint64_t(strides[1]) * e, std::uint64_t(strides[2]) * e,
          std::uint64_t(strides[0]) * e};
}

}  // namespace

std::optional<std::string> attention_map_error(const AttentionProblem& p, const void* base,
                                               const std::int64_t (&strides)[3]) {
  const std::string_view stride_names[3] = {"row", "head", "batch"};
  return tma_addressing_error(base, map_byte_strides(p, strides), stride_names);
}

CUresult encode_attention_map(TmaDescriptor& map, const char* name, const AttentionProblem& p,
                              const void* base, const std::int64_t (&strides)[3],
                              std::int64_t seqlen, std::int64_t heads, std::uint32_t rows) {
  if (auto why = attention_map_error(p, base, strides))
    throw_invalid(
        fmt::format("attention tensor {} cannot be read through a TMA map, which the fa3 "
                    "family needs: {} (the fa2 family has no such requirement)",
                    name, *why));
  const std::uint64_t dims[4] = {std::uint64_t(p.head_dim), std::uint64_t(seqlen),
                                 std::uint64_t(heads), std::uint64_t(p.batch)};
  const std::uint32_t box[4] = {kBoxColumns, rows, 1, 1};
  return encode_tensor_map(map, p.dtype, base, dims, map_byte_strides(p, strides), box);
}

}  // namespace kt::rt
