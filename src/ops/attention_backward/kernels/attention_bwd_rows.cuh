// What the attention backward's families share: a CTA's work (CtaWork) and the row kernels,
// launched on one stream around the family's main kernel (AttentionBackwardKernel):
//   attention_bwd_preprocess   before it: D = rowsum(dO ∘ O) and the logsumexp in base 2, both in
//                              FP32; zeroes the FP32 dQ accumulator (and, deterministic, the dQ
//                              semaphores and the CTA ticket);
//   attention_bwd_convert_dq   after it: dQ = accumulator · softmax_scale, in T.
// Instantiated by NVRTC name expressions; runs on sm_80 and later.
#pragma once

#include "kerntune/attention_backward/attention_bwd_params.h"
#include "kerntune/attention_backward/attention_bwd_split.h"
#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/work_order.h"

namespace kt {
namespace attn_bwd {

constexpr float kLog2e = 1.4426950408889634f;

// Eight 16-bit elements or four floats, moved as one 16-byte access.
struct alignas(16) Chunk16 {
  unsigned int w[4];
};

// The coordinates of row r = (b · heads + h) · seqlen + i.
__device__ __forceinline__ void decode_row(long long r, int heads, int seqlen, int& b, int& h,
                                           int& i) {
  i = int(r % seqlen);
  const long long bh = r / seqlen;
  h = int(bh % heads);
  b = int(bh / heads);
}

// The dQ semaphores of a launch: word 0 is the CTA ticket, then one word per (batch, query head,
// query block of kBlockM rows, head_dim part).
template <int kBlockM, int kParts>
__device__ __forceinline__ long long num_semaphore_words(const AttentionBwdParams& p) {
  return 1 + (long long)p.batch * p.heads_q * ((p.seqlen_q + kBlockM - 1) / kBlockM) * kParts;
}

// A CTA's share of a family's main kernel: its key block of kBlockN keys, key/value head, batch
// and head_dim part of kParts, and its steps: every query block of kBlockM rows that sees a key of
// the block (all, or causal from the one holding the first row that sees key n0, row n0 -
// (seqlen_k - seqlen_q)) for every query head of the key/value head, head-major. The CTA's index
// in launch order (the linear blockIdx over the grid (x, y, z) = (key blocks, key/value heads,
// batches · kParts), or kDeterministic its ticket) is an item of sectioned_slot's order
// (common/work_order.h) over the key blocks of each entry = kv_head + heads_kv · (batch + batch
// count · part): full masks key blocks fastest (sections of 1); causal, where key block 0 sees
// the most query blocks, key block by key block over sections of p.causal_section entries, the
// longest CTAs first. Either way an entry's key blocks come in ascending order, which the
// deterministic dQ order needs (a CTA waits only on CTAs that started before it).
struct CtaWork {
  int n_block, kv_head, batch;
  int part;            // of the head_dim columns of dK, dV and dQ (head_dim_parts)
  int group;           // query heads of the key/value head
  int m_first;         // the first query block a head's steps visit
  int steps_per_head;  // the query blocks a head's steps visit
  int num_steps;       // steps_per_head · group

  __device__ __forceinline__ int head(int step) const {
    return kv_head * group + step / steps_per_head;
  }
  __device__ __forceinline__ int m_block(int step) const { return m_first + step % steps_per_head; }
};

template <int kBlockM, int kBlockN, bool kCausal, bool kDeterministic, int kParts = 1>
__device__ __forceinline__ CtaWork cta_work(const AttentionBwdParams& p, unsigned int ticket) {
  CtaWork w;
  const int num_n_blocks = (p.seqlen_k + kBlockN - 1) / kBlockN;
  const int num_m_blocks = (p.seqlen_q + kBlockM - 1) / kBlockM;
  const int index = kDeterministic
                        ? int(ticket)
                        : int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  const int entries = p.heads_kv * p.batch * kParts;
  const WorkSlot slot =
      sectioned_slot(index, num_n_blocks, entries, kCausal ? p.causal_section : 1);
  w.n_block = slot.block;
  w.kv_head = slot.entry % p.heads_kv;
  const int rest = slot.entry / p.heads_kv;
  w.batch = kParts == 1 ? rest : rest % p.batch;
  w.part = kParts == 1 ? 0 : rest / p.batch;
  w.group = p.heads_q / p.heads_kv;
  w.m_first = 0;
  if constexpr (kCausal) {
    const int first_row = w.n_block * kBlockN - (p.seqlen_k - p.seqlen_q);
    w.m_first = first_row >= p.seqlen_q ? num_m_blocks : (first_row > 0 ? first_row / kBlockM : 0);
  }
  w.steps_per_head = num_m_blocks - w.m_first;
  w.num_steps = w.steps_per_head * w.group;
  return w;
}

}  // namespace attn_bwd

// D[r] = Σ_d dO[r, d] · O[r, d] in FP32, lse_log2[r] = lse[r] · log2(e) (+inf where lse is
// -inf: a row that sees no key, whose P = 2^(x - lse_log2) is then 0 for any finite x) and
// dq_accum[r, :] = 0 for every row r = (b · heads_q + h) · seqlen_q + i; kDeterministic also zeroes
// the dQ semaphores of kBlockM-row query blocks (and head_dim parts).
// Launch: grid ⌈rows / (128 / row_slots(kHeadDim))⌉, 128 threads, no dynamic shared memory.
template <typename T, int kHeadDim, int kBlockM, bool kDeterministic>
__global__ void __launch_bounds__(attn_bwd::kRowThreads)
    attention_bwd_preprocess(const AttentionBwdParams params) {
  static_assert(kHeadDim % 32 == 0 && kHeadDim >= 64 && kHeadDim <= 256,
                "a row is 8 to 32 16-byte chunks");
  constexpr int kThreadsPerRow = kHeadDim / 8;
  constexpr int kSlots = attn_bwd::row_slots(kHeadDim);
  constexpr int kRowsPerCta = attn_bwd::kRowThreads / kSlots;
  const int tid = threadIdx.x;
  if constexpr (kDeterministic) {
    const long long words =
        attn_bwd::num_semaphore_words<kBlockM, attn_bwd::head_dim_parts(kHeadDim)>(params);
    for (long long x = (long long)blockIdx.x * attn_bwd::kRowThreads + tid; x < words;
         x += (long long)gridDim.x * attn_bwd::kRowThreads)
      params.dq_semaphores[x] = 0;
  }
  const long long rows = (long long)params.batch * params.heads_q * params.seqlen_q;
  const long long row = (long long)blockIdx.x * kRowsPerCta + tid / kSlots;
  const int part = tid % kSlots;
  float sum = 0.0f;
  if (row < rows && part < kThreadsPerRow) {
    int b, h, i;
    attn_bwd::decode_row(row, params.heads_q, params.seqlen_q, b, h, i);
    const T* o = static_cast<const T*>(params.o) + b * params.o_stride.batch +
                 h * params.o_stride.head + i * params.o_stride.row + part * 8;
    const T* dout = static_cast<const T*>(params.dout) + b * params.dout_stride.batch +
                    h * params.dout_stride.head + i * params.dout_stride.row + part * 8;
    const attn_bwd::Chunk16 oc = *reinterpret_cast<const attn_bwd::Chunk16*>(o);
    const attn_bwd::Chunk16 dc = *reinterpret_cast<const attn_bwd::Chunk16*>(dout);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      sum += DTypeTraits<T>::to_float(T{(unsigned short)(oc.w[w] & 0xFFFFu)}) *
             DTypeTraits<T>::to_float(T{(unsigned short)(dc.w[w] & 0xFFFFu)});
      sum += DTypeTraits<T>::to_float(T{(unsigned short)(oc.w[w] >> 16)}) *
             DTypeTraits<T>::to_float(T{(unsigned short)(dc.w[w] >> 16)});
    }
    attn_bwd::Chunk16* acc =
        reinterpret_cast<attn_bwd::Chunk16*>(params.dq_accum + row * kHeadDim + part * 8);
    acc[0] = attn_bwd::Chunk16{{0u, 0u, 0u, 0u}};
    acc[1] = attn_bwd::Chunk16{{0u, 0u, 0u, 0u}};
  }
  // The row's threads are consecutive lanes of one warp.
#pragma unroll
  for (int offset = kSlots / 2; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
  if (row < rows && part == 0) {
    params.d_rows[row] = sum;
    const float lse = params.lse[row];
    params.lse_log2[row] =
        lse == __uint_as_float(0xFF800000u) ? __uint_as_float(0x7F800000u) : lse * attn_bwd::kLog2e;
  }
}

// dQ[b, i, h, :] = dq_accum[r, :] · softmax_scale in T for every row r = (b · heads_q + h) ·
// seqlen_q + i. Launch as attention_bwd_preprocess.
template <typename T, int kHeadDim>
__global__ void __launch_bounds__(attn_bwd::kRowThreads)
    attention_bwd_convert_dq(const AttentionBwdParams params) {
  constexpr int kThreadsPerRow = kHeadDim / 8;
  constexpr int kSlots = attn_bwd::row_slots(kHeadDim);
  constexpr int kRowsPerCta = attn_bwd::kRowThreads / kSlots;
  const int tid = threadIdx.x;
  const long long rows = (long long)params.batch * params.heads_q * params.seqlen_q;
  const long long row = (long long)blockIdx.x * kRowsPerCta + tid / kSlots;
  const int part = tid % kSlots;
  if (row >= rows || part >= kThreadsPerRow) return;
  int b, h, i;
  attn_bwd::decode_row(row, params.heads_q, params.seqlen_q, b, h, i);
  const float* acc = params.dq_accum + row * kHeadDim + part * 8;
  const attn_bwd::Chunk16 lo = *reinterpret_cast<const attn_bwd::Chunk16*>(acc);
  const attn_bwd::Chunk16 hi = *reinterpret_cast<const attn_bwd::Chunk16*>(acc + 4);
  const float scale = params.softmax_scale;
  attn_bwd::Chunk16 out;
#pragma unroll
  for (int w = 0; w < 2; ++w) {
    out.w[w] = DTypeTraits<T>::pack2(__uint_as_float(lo.w[2 * w]) * scale,
                                     __uint_as_float(lo.w[2 * w + 1]) * scale);
    out.w[2 + w] = DTypeTraits<T>::pack2(__uint_as_float(hi.w[2 * w]) * scale,
                                         __uint_as_float(hi.w[2 * w + 1]) * scale);
  }
  T* dq = static_cast<T*>(params.dq) + b * params.dq_stride.batch + h * params.dq_stride.head +
          i * params.dq_stride.row + part * 8;
  *reinterpret_cast<attn_bwd::Chunk16*>(dq) = out;
}

}  // namespace kt
