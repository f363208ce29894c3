// The attention backward kernels' parameter blocks, shared verbatim by the host (C++) and the
// device (NVRTC): plain types only; the host static_asserts the layouts
// (attention_backward_kernel.cpp).
#pragma once

#if defined(__CUDACC_RTC__)
#include "kerntune/common/tensor_strides.h"
#include "kerntune/common/tma_descriptor.h"
#else
#include "common/tensor_strides.h"
#include "common/tma_descriptor.h"
#endif

namespace kt {

// Every tensor is addressed by its TensorStrides (in elements, head_dim contiguous). Q, O, dO,
// dQ: heads_q heads of seqlen_q rows; K, V, dK, dV: heads_kv heads of seqlen_k rows
// (heads_q % heads_kv == 0; query head h belongs to key/value head h / (heads_q / heads_kv)). The
// workspace arrays are the runtime's scratch, laid out by the host (attention_backward_workspace).
struct AttentionBwdParams {
  const void* q;
  const void* k;
  const void* v;
  const void* o;
  const void* dout;
  const float* lse;  // [batch, heads_q, seqlen_q] FP32 row logsumexp (natural log)
  void* dq;
  void* dk;
  void* dv;
  float* dq_accum;  // workspace: [batch, heads_q, seqlen_q, head_dim] FP32, zeroed first
  float* d_rows;    // workspace: D = rowsum(dO ∘ O), [batch, heads_q, seqlen_q] FP32
  float* lse_log2;  // workspace: lse · log2(e) (+inf for -inf), [batch, heads_q, seqlen_q] FP32
  unsigned int* dq_semaphores;  // workspace, deterministic only: ticket, then one per dQ block
  TensorStrides q_stride;
  TensorStrides k_stride;
  TensorStrides v_stride;
  TensorStrides o_stride;
  TensorStrides dout_stride;
  TensorStrides dq_stride;
  TensorStrides dk_stride;
  TensorStrides dv_stride;
  int batch;
  int heads_q;
  int heads_kv;
  int seqlen_q;
  int seqlen_k;
  float softmax_scale;  // the forward's scale (dQ and dK carry it)
  float scale_log2;     // softmax_scale · log2(e): P = 2^(S · scale_log2 - lse · log2(e))
  int causal_section;   // causal: entries (key/value head, batch, part) a section of the CTAs'
                        // order (cta_work, common/work_order.h)
};

// The sm90 (fa3) family's main kernel parameters: TMA maps, then the block above. Q and dO
// {head_dim, seqlen_q, heads_q, batch} in boxes of {64, block_m}; K and V {head_dim, seqlen_k,
// heads_kv, batch} in boxes of {64, block_n}, dK and dV the same in boxes of {64, 64} (one
// consumer warpgroup's keys), all 128B-swizzled 16-bit elements with the tensors' strides; the
// FP32 dQ accumulator {head_dim, seqlen_q, heads_q, batch} dense, in 128B-swizzled boxes of {32,
// 64}; lse_log2 and D as one dimension of batch · heads_q · seqlen_q FP32 rows, in unswizzled
// boxes of {block_m}. See attention_bwd_sm90.cuh.
struct AttentionBwdSm90Params {
  TmaDescriptor q_map;
  TmaDescriptor k_map;
  TmaDescriptor v_map;
  TmaDescriptor do_map;
  TmaDescriptor dk_map;
  TmaDescriptor dv_map;
  TmaDescriptor dq_accum_map;
  TmaDescriptor lse_log2_map;
  TmaDescriptor d_rows_map;
  AttentionBwdParams bwd;
};

}  // namespace kt
