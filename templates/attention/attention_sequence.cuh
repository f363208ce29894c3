// A batch entry's sequence as the attention kernels address it: padded (every sequence seqlen_q x
// seqlen_k, tensors addressed through their batch strides) or packed variable-length (cu_seqlens
// row offsets into (total_tokens, heads, head_dim) tensors, batch strides 0), and where a row's
// logsumexp goes in either.
#pragma once

#include "kerntune/attention/attention_params.h"

namespace kt {
namespace attn {

struct Sequence {
  int q_begin;  // the sequence's first query row in Q and O (0 when padded)
  int k_begin;  // its first key row in K and V (0 when padded)
  int seqlen_q;
  int seqlen_k;
};

__device__ __forceinline__ Sequence sequence_of(const AttentionParams& p, int batch) {
  if (p.cu_seqlens_q == nullptr) return {0, 0, p.seqlen_q, p.seqlen_k};
  const int q0 = p.cu_seqlens_q[batch];
  const int k0 = p.cu_seqlens_k[batch];
  return {q0, k0, p.cu_seqlens_q[batch + 1] - q0, p.cu_seqlens_k[batch + 1] - k0};
}

// Index of the logsumexp of the sequence's query `row` of `head`: [batch, heads_q, seqlen_q]
// padded, [heads_q, total_q] packed (FlashAttention's varlen layout).
__device__ __forceinline__ long long lse_index(const AttentionParams& p, const Sequence& s,
                                               int batch, int head, int row) {
  return p.cu_seqlens_q == nullptr
             ? (static_cast<long long>(batch) * p.heads_q + head) * p.seqlen_q + row
             : static_cast<long long>(head) * p.total_q + s.q_begin + row;
}

}  // namespace attn
}  // namespace kt
