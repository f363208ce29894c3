// Device kernels that verify attention backward candidates on the GPU, all in FP32 from the
// tensors as stored: the forward of every row (O in T and the logsumexp, the backward's inputs),
// the reference dQ of sampled query rows and dK, dV of sampled key rows, and a gather of a
// candidate's sampled rows with a count of its non-finite values. Random and NaN fills come
// from gemm_check.cuh (kt::fill_random, kt::fill_poison).
#pragma once

#include "kerntune/attention/attention_check.cuh"
#include "kerntune/attention_backward/attention_bwd_params.h"
#include "kerntune/common/dtypes.cuh"

namespace kt {
namespace check {

constexpr int kBwdRowsPerPass = 1024;  // keys (or queries) staged in shared memory at a time
constexpr int kBwdMaxPerThread = kAttentionMaxHeadDim / 32;

// <a, b> in FP32 over head_dim elements, a in shared memory as floats, b in T.
template <typename T>
__device__ __forceinline__ float dot_row(const float* a, const T* b, int head_dim) {
  float dot = 0.0f;
  for (int d = 0; d < head_dim; ++d) dot = fmaf(a[d], DTypeTraits<T>::to_float(b[d]), dot);
  return dot;
}

// <a, b> in FP32 over head_dim elements of two rows in T.
template <typename T>
__device__ __forceinline__ float dot_rows(const T* a, const T* b, int head_dim) {
  float dot = 0.0f;
  for (int d = 0; d < head_dim; ++d)
    dot = fmaf(DTypeTraits<T>::to_float(a[d]), DTypeTraits<T>::to_float(b[d]), dot);
  return dot;
}

// Row `row` of a [batch, seqlen, heads, head_dim] tensor addressed by element strides.
template <typename T>
__device__ __forceinline__ const T* tensor_row(const void* base, const TensorStrides& stride, int b,
                                               int h, int i) {
  return static_cast<const T*>(base) + b * stride.batch + h * stride.head + i * stride.row;
}

// Query row r = (b · heads_q + h) · seqlen_q + i of the call, and the key/value head of h.
struct QueryRow {
  int b, h, i, kv_head;
};
__device__ __forceinline__ QueryRow query_row(const AttentionBwdParams& p, long long r) {
  const int h = int(r / p.seqlen_q % p.heads_q);
  return {int(r / p.seqlen_q / p.heads_q), h, int(r % p.seqlen_q), h / (p.heads_q / p.heads_kv)};
}

// Query rows of the call: batch · heads_q · seqlen_q.
__device__ __forceinline__ long long query_rows(const AttentionBwdParams& p) {
  return static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q;
}

// One past the last key query i sees (0 when none), FlashAttention's bottom-right causal mask.
__device__ __forceinline__ int visible_keys(const AttentionBwdParams& p, int causal, int i) {
  const int end = i + p.seqlen_k - p.seqlen_q + 1;
  return !causal || end > p.seqlen_k ? p.seqlen_k : (end > 0 ? end : 0);
}

// Rows of the pass that starts at row `first` of `end`: at most kBwdRowsPerPass.
__device__ __forceinline__ int rows_in_pass(int first, int end) {
  return end - first < kBwdRowsPerPass ? end - first : kBwdRowsPerPass;
}

// acc[a] += Σ_{jj < count} weights[jj] · rows[jj · row_stride + d] in FP32, in jj order, for the
// thread's columns d = tid + a · threads < head_dim: a pass's weighted sum of rows in T, its
// weights staged in shared memory by the block.
template <typename T>
__device__ __forceinline__ void accumulate_weighted_rows(float (&acc)[kBwdMaxPerThread],
                                                         const float* weights, const T* rows,
                                                         long long row_stride, int count,
                                                         int head_dim, int tid, int threads) {
#pragma unroll
  for (int a = 0; a < kBwdMaxPerThread; ++a) {
    const int d = tid + a * threads;
    if (d >= head_dim) continue;
    const T* col = rows + d;
    float total = acc[a];
    for (int jj = 0; jj < count; ++jj)
      total = fmaf(weights[jj], DTypeTraits<T>::to_float(col[jj * row_stride]), total);
    acc[a] = total;
  }
}

}  // namespace check

// For every query row r = (b · heads_q + h) · seqlen_q + i: o[b, i, h, :] = softmax(scale ·
// q·Kᵀ) · V in FP32 rounded to T (o with params.o's strides) and lse[r] = max · scale + ln Σ
// exp (natural log); a row that sees no key gets O = 0 and lse = -inf. Two passes over the keys
// (the max, then exp and Σ p v kBwdRowsPerPass keys at a time); blocks stride over the rows;
// blockDim.x a multiple of 32 (128 intended); head_dim <= 256.
template <typename T>
__global__ void attention_bwd_reference_forward(const AttentionBwdParams params, int head_dim,
                                                int causal, T* o, float* lse) {
  __shared__ float q_row[check::kAttentionMaxHeadDim];
  __shared__ float probs[check::kBwdRowsPerPass];
  __shared__ float scratch[32];
  const int threads = blockDim.x;
  const int tid = threadIdx.x;
  const long long rows = check::query_rows(params);
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const auto [b, h, i, kv_head] = check::query_row(params, r);
    const T* q = check::tensor_row<T>(params.q, params.q_stride, b, h, i);
    const T* k = check::tensor_row<T>(params.k, params.k_stride, b, kv_head, 0);
    const T* v = check::tensor_row<T>(params.v, params.v_stride, b, kv_head, 0);
    const int key_end = check::visible_keys(params, causal, i);

    __syncthreads();  // the previous row's q_row and probs are no longer read
    for (int d = tid; d < head_dim; d += threads) q_row[d] = DTypeTraits<T>::to_float(q[d]);
    __syncthreads();

    float row_max = check::negative_infinity();
    for (int j = tid; j < key_end; j += threads)
      row_max = fmaxf(row_max, check::dot_row(q_row, k + j * params.k_stride.row, head_dim) *
                                   params.softmax_scale);
    row_max = check::block_reduce<true>(row_max, scratch);

    float acc[check::kBwdMaxPerThread];
#pragma unroll
    for (int a = 0; a < check::kBwdMaxPerThread; ++a) acc[a] = 0.0f;
    float sum = 0.0f;
    for (int first = 0; first < key_end; first += check::kBwdRowsPerPass) {
      const int count = check::rows_in_pass(first, key_end);
      for (int jj = tid; jj < count; jj += threads) {
        const T* k_row = k + (first + jj) * params.k_stride.row;
        const float p =
            expf(check::dot_row(q_row, k_row, head_dim) * params.softmax_scale - row_max);
        probs[jj] = p;
        sum += p;
      }
      __syncthreads();
      check::accumulate_weighted_rows(acc, probs, v + first * params.v_stride.row,
                                      params.v_stride.row, count, head_dim, tid, threads);
      __syncthreads();  // probs is rewritten by the next pass
    }
    sum = check::block_reduce<false>(sum, scratch);
    const float inv_sum = sum > 0.0f ? 1.0f / sum : 0.0f;
    T* o_row = o + b * params.o_stride.batch + h * params.o_stride.head + i * params.o_stride.row;
#pragma unroll
    for (int a = 0; a < check::kBwdMaxPerThread; ++a) {
      const int d = tid + a * threads;
      if (d < head_dim) o_row[d] = DTypeTraits<T>::from_float(acc[a] * inv_sum);
    }
    if (tid == 0) lse[r] = sum > 0.0f ? row_max + logf(sum) : check::negative_infinity();
  }
}

// For each sampled query row x < num_rows, r = rows[x] = (b · heads_q + h) · seqlen_q + i:
// out[x · head_dim + d] = dQ[b, i, h, d] = scale · Σ_j P_ij (dP_ij - D_i) K_j[d] in FP32, with
// P_ij = exp(scale · q_i·k_j - lse_i), dP_ij = dO_i·V_j and D_i = dO_i·O_i from the tensors as
// stored (params.lse the forward's). A row out of range gives NaN. Blocks stride over the
// samples; blockDim.x a multiple of 32 (128 intended); head_dim <= 256.
template <typename T>
__global__ void attention_bwd_reference_dq(const AttentionBwdParams params, int head_dim,
                                           int causal, const int* rows, int num_rows, float* out) {
  __shared__ float q_row[check::kAttentionMaxHeadDim];
  __shared__ float do_row[check::kAttentionMaxHeadDim];
  __shared__ float ds[check::kBwdRowsPerPass];
  __shared__ float scratch[32];
  const int threads = blockDim.x;
  const int tid = threadIdx.x;
  for (int x = blockIdx.x; x < num_rows; x += gridDim.x) {
    const long long r = rows[x];
    if (r < 0 || r >= check::query_rows(params) || head_dim > check::kAttentionMaxHeadDim) {
      for (int d = tid; d < head_dim; d += threads)
        out[(long long)x * head_dim + d] = DTypeTraits<float>::nan();
      continue;
    }
    const auto [b, h, i, kv_head] = check::query_row(params, r);
    const T* q = check::tensor_row<T>(params.q, params.q_stride, b, h, i);
    const T* o = check::tensor_row<T>(params.o, params.o_stride, b, h, i);
    const T* dout = check::tensor_row<T>(params.dout, params.dout_stride, b, h, i);
    const T* k = check::tensor_row<T>(params.k, params.k_stride, b, kv_head, 0);
    const T* v = check::tensor_row<T>(params.v, params.v_stride, b, kv_head, 0);
    const int key_end = check::visible_keys(params, causal, i);
    const float lse = params.lse[r];

    __syncthreads();  // the previous sample's rows and ds are no longer read
    float part = 0.0f;
    for (int d = tid; d < head_dim; d += threads) {
      q_row[d] = DTypeTraits<T>::to_float(q[d]);
      do_row[d] = DTypeTraits<T>::to_float(dout[d]);
      part = fmaf(do_row[d], DTypeTraits<T>::to_float(o[d]), part);
    }
    const float d_row = check::block_reduce<false>(part, scratch);  // also publishes the rows

    float acc[check::kBwdMaxPerThread];
#pragma unroll
    for (int a = 0; a < check::kBwdMaxPerThread; ++a) acc[a] = 0.0f;
    for (int first = 0; first < key_end; first += check::kBwdRowsPerPass) {
      const int count = check::rows_in_pass(first, key_end);
      for (int jj = tid; jj < count; jj += threads) {
        const int j = first + jj;
        const float p = expf(check::dot_row(q_row, k + j * params.k_stride.row, head_dim) *
                                 params.softmax_scale -
                             lse);
        const float dp = check::dot_row(do_row, v + j * params.v_stride.row, head_dim);
        ds[jj] = p * (dp - d_row);
      }
      __syncthreads();
      check::accumulate_weighted_rows(acc, ds, k + first * params.k_stride.row, params.k_stride.row,
                                      count, head_dim, tid, threads);
      __syncthreads();  // ds is rewritten by the next pass
    }
#pragma unroll
    for (int a = 0; a < check::kBwdMaxPerThread; ++a) {
      const int d = tid + a * threads;
      if (d < head_dim) out[(long long)x * head_dim + d] = acc[a] * params.softmax_scale;
    }
  }
}

// For each sampled key row x < num_rows, r = rows[x] = (b · heads_kv + g) · seqlen_k + j:
// dk_out[x · head_dim + d] = dK[b, j, g, d] = scale · Σ_h Σ_i dS_ij Q_i[d] and dv_out[...] =
// dV[b, j, g, d] = Σ_h Σ_i P_ij dO_i[d] over the query heads h of key/value head g and the queries
// i that see key j, with P, dP, D as attention_bwd_reference_dq. A row out of range gives NaN.
// Blocks stride over the samples; blockDim.x a multiple of 32 (128 intended); head_dim <= 256.
template <typename T>
__global__ void attention_bwd_reference_dkv(const AttentionBwdParams params, int head_dim,
                                            int causal, const int* rows, int num_rows,
                                            float* dk_out, float* dv_out) {
  __shared__ float k_row[check::kAttentionMaxHeadDim];
  __shared__ float v_row[check::kAttentionMaxHeadDim];
  __shared__ float p_s[check::kBwdRowsPerPass];
  __shared__ float ds_s[check::kBwdRowsPerPass];
  const int threads = blockDim.x;
  const int tid = threadIdx.x;
  const long long count_rows = (long long)params.batch * params.heads_kv * params.seqlen_k;
  const int group = params.heads_q / params.heads_kv;
  for (int x = blockIdx.x; x < num_rows; x += gridDim.x) {
    const long long r = rows[x];
    if (r < 0 || r >= count_rows || head_dim > check::kAttentionMaxHeadDim) {
      for (int d = tid; d < head_dim; d += threads) {
        dk_out[(long long)x * head_dim + d] = DTypeTraits<float>::nan();
        dv_out[(long long)x * head_dim + d] = DTypeTraits<float>::nan();
      }
      continue;
    }
    const int j = int(r % params.seqlen_k);
    const int g = int(r / params.seqlen_k % params.heads_kv);
    const int b = int(r / params.seqlen_k / params.heads_kv);
    const T* k = check::tensor_row<T>(params.k, params.k_stride, b, g, j);
    const T* v = check::tensor_row<T>(params.v, params.v_stride, b, g, j);
    // Queries i >= j - (seqlen_k - seqlen_q) see key j (causal); all of them otherwise.
    const int first_query = causal && j > params.seqlen_k - params.seqlen_q
                                ? j - (params.seqlen_k - params.seqlen_q)
                                : 0;

    __syncthreads();  // the previous sample's rows are no longer read
    for (int d = tid; d < head_dim; d += threads) {
      k_row[d] = DTypeTraits<T>::to_float(k[d]);
      v_row[d] = DTypeTraits<T>::to_float(v[d]);
    }
    __syncthreads();

    float dk_acc[check::kBwdMaxPerThread], dv_acc[check::kBwdMaxPerThread];
#pragma unroll
    for (int a = 0; a < check::kBwdMaxPerThread; ++a) dk_acc[a] = dv_acc[a] = 0.0f;
    for (int h = g * group; h < (g + 1) * group; ++h) {
      const T* q = check::tensor_row<T>(params.q, params.q_stride, b, h, 0);
      const T* o = check::tensor_row<T>(params.o, params.o_stride, b, h, 0);
      const T* dout = check::tensor_row<T>(params.dout, params.dout_stride, b, h, 0);
      const float* lse = params.lse + ((long long)b * params.heads_q + h) * params.seqlen_q;
      for (int first = first_query; first < params.seqlen_q; first += check::kBwdRowsPerPass) {
        const int count = check::rows_in_pass(first, params.seqlen_q);
        for (int ii = tid; ii < count; ii += threads) {
          const int i = first + ii;
          const T* q_i = q + i * params.q_stride.row;
          const T* do_i = dout + i * params.dout_stride.row;
          const float p =
              expf(check::dot_row(k_row, q_i, head_dim) * params.softmax_scale - lse[i]);
          const float dp = check::dot_row(v_row, do_i, head_dim);
          const float d_i = check::dot_rows(do_i, o + i * params.o_stride.row, head_dim);
          p_s[ii] = p;
          ds_s[ii] = p * (dp - d_i);
        }
        __syncthreads();
        check::accumulate_weighted_rows(dk_acc, ds_s, q + first * params.q_stride.row,
                                        params.q_stride.row, count, head_dim, tid, threads);
        check::accumulate_weighted_rows(dv_acc, p_s, dout + first * params.dout_stride.row,
                                        params.dout_stride.row, count, head_dim, tid, threads);
        __syncthreads();  // p_s and ds_s are rewritten by the next pass
      }
    }
#pragma unroll
    for (int a = 0; a < check::kBwdMaxPerThread; ++a) {
      const int d = tid + a * threads;
      if (d >= head_dim) continue;
      dk_out[(long long)x * head_dim + d] = dk_acc[a] * params.softmax_scale;
      dv_out[(long long)x * head_dim + d] = dv_acc[a];
    }
  }
}

// out[x · head_dim + d] = the tensor's row rows[x] = (b · heads + h) · seqlen + i in FP32 (NaN
// for a row out of range), and adds to *nonfinite_count the NaN or Inf elements of the whole
// tensor (batch x seqlen x heads rows of head_dim, element strides), one atomic per block.
// Warps stride over the tensor's rows, lanes over head_dim; any grid, blockDim.x a multiple of
// 32.
template <typename T>
__global__ void attention_bwd_gather_rows(const T* tensor, TensorStrides stride, int batch,
                                          int heads, int seqlen, int head_dim, const int* rows,
                                          int num_rows, float* out,
                                          unsigned long long* nonfinite_count) {
  __shared__ unsigned long long block_count;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const long long warps = (long long)gridDim.x * (blockDim.x / 32);
  const long long total = (long long)batch * heads * seqlen;
  unsigned long long count = 0;
  for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < total;
       r += warps) {
    const T* row = check::tensor_row<T>(tensor, stride, int(r / seqlen / heads),
                                        int(r / seqlen % heads), int(r % seqlen));
    for (int d = lane; d < head_dim; d += 32)
      if (!DTypeTraits<T>::is_finite(row[d])) ++count;
  }
  if (count != 0) atomicAdd(&block_count, count);
  __syncthreads();
  if (threadIdx.x == 0 && block_count != 0) atomicAdd(nonfinite_count, block_count);

  const long long values = (long long)num_rows * head_dim;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < values;
       e += (long long)gridDim.x * blockDim.x) {
    const long long r = rows[e / head_dim];
    const int d = int(e % head_dim);
    out[e] = r < 0 || r >= total ? DTypeTraits<float>::nan()
                                 : DTypeTraits<T>::to_float(check::tensor_row<T>(
                                       tensor, stride, int(r / seqlen / heads),
                                       int(r / seqlen % heads), int(r % seqlen))[d]);
  }
}

}  // namespace kt
