// The attention forward problem: O = softmax(scale · Q·Kᵀ [+ causal mask]) · V per (batch, head),
// with GQA/MQA (heads_q a multiple of heads_kv), over a padded batch or a packed
// variable-length one. What to compute, never how (AttentionConfig).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
  // A packed variable-length batch (flash_attn_varlen_func's layout: Q, O (total_q, heads_q, d),
  // K, V (total_k, heads_kv, d), cu_seqlens): `batch` sequences, the longest seqlen_q x
  // seqlen_k, total_q and total_k rows in all, each causal on its own. As a problem key it
  // names a bucket of such batches (varlen_bucket); the synthetic batch of the bucket
  // (varlen_lengths) is what the tuner measures and the model counts.
  bool varlen = false;
  std::int64_t total_q = 0;
  std::int64_t total_k = 0;

  // (query, key) pairs the mask leaves visible, summed over batch and heads.
  double visible_pairs() const;
  // 4·pairs·d: two matrix products of 2·d FLOPs per visible pair (the FlashAttention count).
  double flops() const { return 4.0 * visible_pairs() * double(head_dim); }
  // Q, K, V read once and O written once.
  double min_bytes() const;

  bool operator==(const AttentionProblem&) const = default;
};

// Copies the sizes batch, heads_q, heads_kv, seqlen_q, seqlen_k and head_dim from `from` into
// `to`: any two structs that name them alike (AttentionProblem, AttentionBackwardProblem, the C
// API's kt_attention_args and kt_attention_backward_args). Nothing else is copied.
template <typename To, typename From>
void copy_attention_sizes(To& to, const From& from) {
  to.batch = from.batch;
  to.heads_q = from.heads_q;
  to.heads_kv = from.heads_kv;
  to.seqlen_q = from.seqlen_q;
  to.seqlen_k = from.seqlen_k;
  to.head_dim = from.head_dim;
}

// Throws kt::Error (invalid argument) naming the field: sizes < 1, heads_q not a multiple of
// heads_kv, an unsupported head_dim (64, 96, 128, 256) or dtype (bf16, fp16), 32-bit overflow.
void validate(const AttentionProblem& problem);

// A varlen problem's synthetic batch: the first sequence the longest (seqlen_q / seqlen_k), the
// others sharing the rest of total_q / total_k as evenly as whole rows allow. Query lengths, or
// key lengths with `keys`.
std::vector<std::int64_t> varlen_lengths(const AttentionProblem& problem, bool keys);

// The bucket a packed batch is tuned and dispatched as: the longest lengths rounded up to a power
// of two (at least 64), the totals up to a power of two within what such a batch can hold
// ([longest + batch - 1, batch x longest]). Batches of one bucket share a kernel; the kernel reads
// the actual lengths from cu_seqlens.
AttentionProblem varlen_bucket(const AttentionProblem& exact);

// Canonical key, e.g. "attn:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal" (or ".full"), a varlen
// bucket "attn:bf16:b16.hq32.hkv8.sq8192.sk8192.d128.causal.varlen.tq65536.tk65536".
std::string to_key(const AttentionProblem& problem);
AttentionProblem parse_attention_key(std::string_view key);

// Parses "b=4,hq=32,hkv=8,sq=4096,sk=4096,d=128" into `problem` (h= sets both head counts,
// s= both sequence lengths; hkv defaults to hq and sk to sq; b, the heads, the query length and
// d are required); tq= (and tk=, default tq) make it a packed varlen batch of those totals with
// sq/sk the longest sequence. Throws naming the bad field: unknown, given twice, missing, not a
// whole decimal integer, out of range.
void parse_attention_shape(std::string_view shape, AttentionProblem& problem);

}  // namespace kt
