// The attention backward kernels' parameter block, shared verbatim by the host (C++) and the
// device (NVRTC): plain types only; the host static_asserts the layout
// (attention_backward_launcher.cpp).
#pragma once

namespace kt {

// Every tensor is addressed as base + b · batch_stride + i · row_stride + h · head_stride + d
// (strides in elements, head_dim contiguous). Q, O, dO, dQ: heads_q heads of seqlen_q rows; K,
// V, dK, dV: heads_kv heads of seqlen_k rows (heads_q % heads_kv == 0; query head h belongs to
// key/value head h / (heads_q / heads_kv)). The workspace arrays are the runtime's scratch,
// laid out by the host (attention_backward_workspace).
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
  unsigned int* dq_semaphores;  // workspace, deterministic only: ticket, then one per dQ block
  long long q_batch_stride;
  long long q_row_stride;
  long long q_head_stride;
  long long k_batch_stride;
  long long k_row_stride;
  long long k_head_stride;
  long long v_batch_stride;
  long long v_row_stride;
  long long v_head_stride;
  long long o_batch_stride;
  long long o_row_stride;
  long long o_head_stride;
  long long dout_batch_stride;
  long long dout_row_stride;
  long long dout_head_stride;
  long long dq_batch_stride;
  long long dq_row_stride;
  long long dq_head_stride;
  long long dk_batch_stride;
  long long dk_row_stride;
  long long dk_head_stride;
  long long dv_batch_stride;
  long long dv_row_stride;
  long long dv_head_stride;
  int batch;
  int heads_q;
  int heads_kv;
  int seqlen_q;
  int seqlen_k;
  float softmax_scale;  // the forward's scale (dQ and dK carry it)
  float scale_log2;     // softmax_scale · log2(e): P = 2^(S · scale_log2 - lse · log2(e))
  int unused;
};

}  // namespace kt
