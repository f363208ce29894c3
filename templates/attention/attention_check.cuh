// Device kernels that verify attention candidates on the GPU: an FP32 reference (two-pass softmax)
// for sampled query rows, and a gather of the candidate's O for those rows with a count of O's
// non-finite values. Inputs are filled with kt::fill_random / kt::fill_poison of gemm_check.cuh.
#pragma once

#include "kerntune/attention/attention_params.h"
#include "kerntune/attention/attention_sequence.cuh"
#include "kerntune/common/dtypes.cuh"
#include "kerntune/gemm/gemm_check.cuh"

namespace kt {
namespace check {

constexpr int kAttentionMaxHeadDim = 256;
constexpr int kReferenceKeysPerPass = 2048;  // probabilities staged in shared memory at a time

__device__ __forceinline__ float negative_infinity() { return __uint_as_float(0xFF800000u); }

// A sampled row r = (b * heads_q + h) * seqlen_q + i, split into its coordinates and its
// sequence; false when r is outside [0, batch * heads_q * seqlen_q) or (a packed batch) i is
// past its sequence's end.
__device__ __forceinline__ bool decode_row(const AttentionParams& params, long long r, int& b,
                                           int& h, int& i, attn::Sequence& seq) {
  const long long count = static_cast<long long>(params.batch) * params.heads_q * params.seqlen_q;
  if (r < 0 || r >= count) return false;
  i = static_cast<int>(r % params.seqlen_q);
  const long long bh = r / params.seqlen_q;
  h = static_cast<int>(bh % params.heads_q);
  b = static_cast<int>(bh / params.heads_q);
  seq = attn::sequence_of(params, b);
  return i < seq.seqlen_q;
}

// Reduces `v` (sum, or maximum when kMax) over the block; every thread gets the result.
// `scratch` holds at least 32 floats; blockDim.x is a multiple of 32.
template <bool kMax>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xFFFFFFFFu, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  const int warps = blockDim.x / 32;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < warps; ++w) v = kMax ? fmaxf(v, scratch[w]) : v + scratch[w];
  return v;
}

// softmax_scale * <q, k_j> in FP32 with q (head_dim floats) in shared memory.
template <typename T>
__device__ __forceinline__ float reference_score(const float* q, const T* k_row, int head_dim,
                                                 float softmax_scale) {
  float dot = 0.0f;
  for (int d = 0; d < head_dim; ++d) dot = fmaf(q[d], DTypeTraits<T>::to_float(k_row[d]), dot);
  return dot * softmax_scale;
}

}  // namespace check

// For each sampled row x < num_rows, r = rows[x] = (b * heads_q + h) * seqlen_q + i: out[x *
// head_dim + d] = O_i[d] and lse_out[x] = log Σ_j exp(S_ij) (natural log; lse_out may be null)
// of query i of head h in batch b, in FP32, with the conventions of attention_fwd_sm80 (causal
// aligned bottom-right; a row with no visible key gives O = 0 and lse = -inf; a row r out of range
// gives NaN; packed batches address each sequence from its cu_seqlens offsets). Two passes over the
// keys, nothing of size seqlen_k stored: pass 1 finds the row max, pass 2 recomputes the scores
// kReferenceKeysPerPass keys at a time into shared memory as exp(S - max), then threads split
// head_dim and accumulate Σ p v. Blocks stride over the samples (one block per sample at a time);
// blockDim.x is a multiple of 32 (128 intended); head_dim <= 256. Uses about 9.3 KB of static
// shared memory and none dynamic, for any seqlen_k.
template <typename T>
__global__ void attention_reference_rows(const AttentionParams params, int head_dim, int causal,
                                         const int* rows, int num_rows, float* out,
                                         float* lse_out) {
  constexpr int kMaxPerThread = check::kAttentionMaxHeadDim / 32;
  __shared__ float q_row[check::kAttentionMaxHeadDim];
  __shared__ float probs[check::kReferenceKeysPerPass];
  __shared__ float scratch[32];
  const T* q_all = static_cast<const T*>(params.q);
  const T* k_all = static_cast<const T*>(params.k);
  const T* v_all = static_cast<const T*>(params.v);
  const int threads = blockDim.x;
  const int tid = threadIdx.x;

  for (int x = blockIdx.x; x < num_rows; x += gridDim.x) {
    int b, h, i;
    attn::Sequence seq;
    if (head_dim > check::kAttentionMaxHeadDim ||
        !check::decode_row(params, rows[x], b, h, i, seq)) {
      const float nan = DTypeTraits<float>::nan();
      for (int d = tid; d < head_dim; d += threads)
        out[static_cast<long long>(x) * head_dim + d] = nan;
      if (lse_out != nullptr && tid == 0) lse_out[x] = nan;
      continue;
    }
    const int kv_head = h / (params.heads_q / params.heads_kv);
    const T* q = q_all + b * params.q_stride.batch + h * params.q_stride.head +
                 (seq.q_begin + i) * params.q_stride.row;
    const T* k = k_all + b * params.k_stride.batch + kv_head * params.k_stride.head +
                 seq.k_begin * params.k_stride.row;
    const T* v = v_all + b * params.v_stride.batch + kv_head * params.v_stride.head +
                 seq.k_begin * params.v_stride.row;
    const int causal_end = i + seq.seqlen_k - seq.seqlen_q + 1;
    const int key_end = causal && causal_end < seq.seqlen_k ? causal_end : seq.seqlen_k;

    __syncthreads();  // q_row and probs of the previous sample are no longer read
    for (int d = tid; d < head_dim; d += threads) q_row[d] = DTypeTraits<T>::to_float(q[d]);
    __syncthreads();

    // Pass 1: the row max.
    float row_max = check::negative_infinity();
    for (int j = tid; j < key_end; j += threads) {
      row_max = fmaxf(row_max, check::reference_score(q_row, k + j * params.k_stride.row, head_dim,
                                                      params.softmax_scale));
    }
    row_max = check::block_reduce<true>(row_max, scratch);

    // Pass 2: p = exp(S - max), l = Σ p, acc = Σ p v.
    float acc[kMaxPerThread];
#pragma unroll
    for (int a = 0; a < kMaxPerThread; ++a) acc[a] = 0.0f;
    float sum = 0.0f;
    for (int first = 0; first < key_end; first += check::kReferenceKeysPerPass) {
      const int count = key_end - first < check::kReferenceKeysPerPass
                            ? key_end - first
                            : check::kReferenceKeysPerPass;
      for (int jj = tid; jj < count; jj += threads) {
        const int j = first + jj;
        const float p = expf(check::reference_score(q_row, k + j * params.k_stride.row, head_dim,
                                                    params.softmax_scale) -
                             row_max);
        probs[jj] = p;
        sum += p;
      }
      __syncthreads();
#pragma unroll
      for (int a = 0; a < kMaxPerThread; ++a) {
        const int d = tid + a * threads;
        if (d < head_dim) {
          const T* v_col = v + first * params.v_stride.row + d;
          float total = acc[a];
          for (int jj = 0; jj < count; ++jj) {
            total =
                fmaf(probs[jj], DTypeTraits<T>::to_float(v_col[jj * params.v_stride.row]), total);
          }
          acc[a] = total;
        }
      }
      __syncthreads();  // probs is rewritten by the next pass
    }
    sum = check::block_reduce<false>(sum, scratch);

    const float inv_sum = sum > 0.0f ? 1.0f / sum : 0.0f;
#pragma unroll
    for (int a = 0; a < kMaxPerThread; ++a) {
      const int d = tid + a * threads;
      if (d < head_dim) out[static_cast<long long>(x) * head_dim + d] = acc[a] * inv_sum;
    }
    if (lse_out != nullptr && tid == 0) {
      lse_out[x] = sum > 0.0f ? row_max + logf(sum) : check::negative_infinity();
    }
  }
}

// out_gathered[x * head_dim + d] = O_i[d] in FP32 for the sampled rows x < num_rows (rows[x] as
// in attention_reference_rows; NaN for a row out of range), and adds to *nonfinite_count the
// number of NaN or Inf elements of O over every (b, h, i < seqlen_q, d < head_dim) (a packed
// batch's rows past a sequence's end are not O's), one atomic
// per block. Warps stride over O's rows, lanes over head_dim; any grid, blockDim.x a multiple
// of 32.
template <typename T>
__global__ void gather_rows(const AttentionParams params, int head_dim, const int* rows,
                            int num_rows, float* out_gathered,
                            unsigned long long* nonfinite_count) {
  __shared__ unsigned long long block_count;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  const T* o_all = static_cast<const T*>(params.o);
  const int lane = threadIdx.x % 32;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  const long long first_warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const long long total_rows =
      static_cast<long long>(params.batch) * params.heads_q * params.seqlen_q;
  unsigned long long count = 0;
  for (long long r = first_warp; r < total_rows; r += warps) {
    int b, h, i;
    attn::Sequence seq;
    if (!check::decode_row(params, r, b, h, i, seq)) continue;
    const T* o_row = o_all + b * params.o_stride.batch + h * params.o_stride.head +
                     (seq.q_begin + i) * params.o_stride.row;
    for (int d = lane; d < head_dim; d += 32) {
      if (!DTypeTraits<T>::is_finite(o_row[d])) ++count;
    }
  }
  if (count != 0) atomicAdd(&block_count, count);
  __syncthreads();
  if (threadIdx.x == 0 && block_count != 0) atomicAdd(nonfinite_count, block_count);

  const long long num_values = static_cast<long long>(num_rows) * head_dim;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < num_values;
       e += stride) {
    const int x = static_cast<int>(e / head_dim);
    const int d = static_cast<int>(e % head_dim);
    int b, h, i;
    attn::Sequence seq;
    if (!check::decode_row(params, rows[x], b, h, i, seq)) {
      out_gathered[e] = DTypeTraits<float>::nan();
      continue;
    }
    out_gathered[e] =
        DTypeTraits<T>::to_float(o_all[b * params.o_stride.batch + h * params.o_stride.head +
                                       (seq.q_begin + i) * params.o_stride.row + d]);
  }
}

}  // namespace kt
