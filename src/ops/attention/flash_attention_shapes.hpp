// The shapes of FlashAttention's benchmark, the attention ops' suites: batch x seqlen = 16k
// tokens and hidden 2048 (heads = 2048 / head_dim), seqlen 512 to 16384.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

namespace kt {

// "b=32,h=16,s=512,d=128" ... "b=1,h=16,s=16384,d=128" for head_dim 128: six shapes, the
// sequence doubling from 512, in the ops' shape syntax.
inline std::vector<std::string> flash_attention_shapes(int head_dim) {
  std::vector<std::string> shapes;
  for (int seqlen = 512; seqlen <= 16384; seqlen *= 2)
    shapes.push_back(
        fmt::format("b={},h={},s={},d={}", 16384 / seqlen, 2048 / head_dim, seqlen, head_dim));
  return shapes;
}

}  // namespace kt
