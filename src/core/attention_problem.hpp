// The attention forward problem: O = softmax(scale · Q·Kᵀ [+ causal mask]) · V per (batch, head),
// with GQA/MQA (heads_q a multiple of heads_kv). What to compute, never how (AttentionConfig).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/types.hpp"

namespace kt {

struct AttentionProblem {
  std::int64_t batch = 1;
  std::int64_t heads_q = 1;
  std::int64_t heads_kv = 1;
  std::int64_t seqlen_q = 1;
  std::int64_t seqlen_k = 1;
  std::int64_t head_dim = 128;
  DType dtype = DType::kBF16;  // Q, K, V and O
  bool causal = false;         // bottom-right aligned when seqlen_q != seqlen_k (FlashAttention)

  // (query, key) pairs the mask leaves visible, summed over batch and heads.
  double visible_pairs() const;
  // 4·pairs·d: two matrix products of 2·d FLOPs per visible pair (the FlashAttention count).
  double flops() const { return 4.0 * visible_pairs() * double(head_dim); }
  // Q, K, V read once and O written once.
  double min_bytes() const;

  bool operator==(const AttentionProblem&) const = default;
};

// Throws kt::Error (invalid argument) naming the field: sizes < 1, heads_q not a multiple of
// heads_kv, an unsupported head_dim (64, 96, 128, 256) or dtype (bf16, fp16), 32-bit overflow.
void validate(const AttentionProblem& problem);

// Canonical key, e.g. "attn:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal" (or ".full").
std::string to_key(const AttentionProblem& problem);
AttentionProblem parse_attention_key(std::string_view key);

// Parses "b=4,hq=32,hkv=8,sq=4096,sk=4096,d=128" into `problem` (h= sets both head counts,
// s= both sequence lengths; hkv defaults to hq and sk to sq; b, the heads, the query length and
// d are required). Throws naming the bad field: unknown, given twice, missing, not a whole
// decimal integer, out of range.
void parse_attention_shape(std::string_view shape, AttentionProblem& problem);

}  // namespace kt
