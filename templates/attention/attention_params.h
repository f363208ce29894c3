// Kernel parameter block of the attention templates. Shared verbatim by the host (C++) and the
// device (NVRTC), so it uses plain types only; the host static_asserts the layout.
#pragma once

#if defined(__CUDACC_RTC__)
#include "kerntune/common/tensor_strides.h"
#include "kerntune/common/tma_descriptor.h"
#else
#include "common/tensor_strides.h"
#include "common/tma_descriptor.h"
#endif

namespace kt {

// Q is [batch, seqlen_q, heads_q, head_dim] or [batch, heads_q, seqlen_q, head_dim] (or any
// other strided layout; or packed [total_q, heads_q, head_dim] with cu_seqlens_q), expressed by
// the three strides of each tensor; head_dim is always
// contiguous (stride 1). K and V have heads_kv heads (heads_q % heads_kv == 0: GQA/MQA; query
// head h reads key/value head h / (heads_q / heads_kv)). O has Q's shape.
struct AttentionParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;  // [batch, heads_q, seqlen_q] contiguous FP32, or null (not written)
  // Split-KV (fa3, num_splits > 1): each split's O, normalized by its own row sum, as
  // [num_splits][batch · heads_q · seqlen_q][head_dim] FP32, then each split's row logsumexp as
  // [num_splits][batch · heads_q · seqlen_q]; combined into O (and lse) by a second kernel.
  float* partials;
  // Packed variable-length batches: [batch + 1] row offsets of each sequence's queries (Q, O) and
  // keys (K, V) in tensors of total_q and total_k rows (batch strides 0); seqlen_q and seqlen_k
  // are then the longest sequence's, and lse is [heads_q, total_q]. Null: every sequence is
  // seqlen_q x seqlen_k.
  const int* cu_seqlens_q;
  const int* cu_seqlens_k;
  // `kerntune trace` (fa3 compiled with -DKT_TRACE): AttentionTraceEvent stamps of the first
  // kAttnTraceMaxCtas CTAs; null otherwise (and never read without the macro).
  unsigned long long* trace;
  TensorStrides q_stride;  // all strides in elements
  TensorStrides k_stride;
  TensorStrides v_stride;
  TensorStrides o_stride;
  int batch;
  int heads_q;
  int heads_kv;
  int seqlen_q;
  int seqlen_k;
  float softmax_scale;  // usually 1 / sqrt(head_dim)
  float scale_log2;     // softmax_scale * log2(e), for exp2-based softmax
  int num_splits;       // key ranges the fa3 split-KV kernel divides each row's keys into (>= 1)
  int total_q;          // packed variable-length batches: Q's rows (all sequences')
  int causal_section;   // fa3, causal: (head, batch) entries a section of the tiles' order
                        // (common/work_order.h)
};

// `kerntune trace` (attention_fwd_sm90.cuh, compiled only with -DKT_TRACE): u64 stamps
// [CTA][event] of the first kAttnTraceMaxCtas CTAs (linear blockIdx) in AttentionParams::trace;
// %globaltimer ns at the timed events, in this order, then the CTA's SM and cycle counts. A
// persistent CTA's phases are its first tile's; kAttnTraceDone ends its last.
enum AttentionTraceEvent : int {
  kAttnTraceEntry = 0,    // thread 0 at entry
  kAttnTraceQLanded,      // consumer 0: the first tile's Q landed
  kAttnTraceFirstScores,  // consumer 0: the first tile's first S = Q·Kᵀ complete
  kAttnTraceLoopDone,     // consumer 0: the first tile's last P·V complete
  kAttnTraceStored,       // consumer 0: the first tile's O stores issued (one CTA a tile: and
                          // their reads of shared memory done)
  kAttnTraceDone,         // consumer 0: every tile of the CTA done
  kAttnTraceSmId,         // thread 0 at entry: %smid + 1 (0: never written)
  kAttnTraceEntryCycles,  // thread 0 at entry: the SM's %clock64
  kAttnTraceLoopCycles,   // consumer 0 at kAttnTraceLoopDone: the SM's %clock64
  kAttnTraceTiles,        // consumer 0 at the end: the tiles the CTA worked
  kAttnTraceEvents
};
constexpr int kAttnTraceTimedEvents = kAttnTraceSmId;
constexpr int kAttnTraceMaxCtas = 1024;

// The sm90 (fa3) family's parameter block: TMA maps of Q, K, V and O as 4D tensors
// {head_dim, seqlen, heads, batch} (element strides of AttentionParams, in bytes), 128B swizzle,
// boxes of 64 head-dim columns: Q and O {64, 64} (one consumer warpgroup's rows), K and V
// {64, block_n}. See attention_fwd_sm90.cuh.
struct AttentionSm90Params {
  TmaDescriptor q_map;
  TmaDescriptor k_map;
  TmaDescriptor v_map;
  TmaDescriptor o_map;
  AttentionParams attn;
};

}  // namespace kt
