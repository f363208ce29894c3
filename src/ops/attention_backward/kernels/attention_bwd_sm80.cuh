// The sm_80 FlashAttention-2 backward on mma.sync: dQ, dK, dV of O = softmax(scale · Q·Kᵀ) · V
// from dO, recomputing P from Q, K and the forward's logsumexp. attention_bwd_sm80 is one CTA per
// (key block, key/value head, batch): dK, dV of its kBlockN keys in registers across every query
// block of every query head of its key/value head (GQA summed in the CTA), dQ added to the FP32
// accumulator with atomics; it runs between the row kernels of attention_bwd_rows.cuh.
// Instantiated by NVRTC name expressions; runs on sm_80 and later.
#pragma once

#include "kerntune/attention/tile_io_sm80.cuh"
#include "kerntune/attention_backward/attention_bwd_params.h"
#include "kerntune/attention_backward/attention_bwd_rows.cuh"
#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm80.cuh"
#include "kerntune/common/swizzled_tile.cuh"
#include "kerntune/common/test_fault.cuh"

namespace kt {
namespace attn_bwd {

// The A fragment of k16 step kq from the C fragments of n8 tiles 2 kq and 2 kq + 1 of one m16
// row tile, converted to T in pairs: (row g, k 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8).
template <typename T, int kTiles>
__device__ __forceinline__ void pack_a_fragment(const float (&c)[kTiles][4], int kq,
                                                unsigned int (&a)[4]) {
  a[0] = DTypeTraits<T>::pack2(c[2 * kq][0], c[2 * kq][1]);
  a[1] = DTypeTraits<T>::pack2(c[2 * kq][2], c[2 * kq][3]);
  a[2] = DTypeTraits<T>::pack2(c[2 * kq + 1][0], c[2 * kq + 1][1]);
  a[3] = DTypeTraits<T>::pack2(c[2 * kq + 1][2], c[2 * kq + 1][3]);
}

}  // namespace attn_bwd

// Dynamic shared memory of attention_bwd_sm80: the CTA's K and V tiles, kStages pairs of Q and dO
// tiles, the dSᵀ tile (keys x queries) and kStages pairs of the query rows' lse and D (FP32).
template <int kHeadDim, int kBlockM, int kBlockN, int kStages>
struct AttentionBwdSmem {
  static constexpr int kKVBytes = kBlockN * kHeadDim * 2;
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kDsBytes = kBlockN * kBlockM * 2;
  static constexpr int kStatsBytes = 2 * kBlockM * 4;
  static constexpr int kBytes = 2 * kKVBytes + kStages * (2 * kQBytes + kStatsBytes) + kDsBytes;
};

// dK, dV of kBlockN keys of one key/value head and the dQ they add, FlashAttention-2's backward
// (conventions of attention_fwd_sm80: causal bottom-right aligned, key j visible to query i iff
// j <= i + seqlen_k - seqlen_q; a row that sees no key contributes nothing).
// One CTA per (key block n_block, key/value head, batch). K and V of the block stay in shared
// memory; each of the kWarps warps owns kBlockN / kWarps = 16 or 32 consecutive keys (kNTiles =
// 1 or 2 m16 tiles) and keeps their dK and dV (kNTiles x 16 x kHeadDim each) in FP32 registers
// while the CTA walks every query block that sees the keys, for every query head of the
// key/value head in turn (the GQA sum stays in registers; dK and dV are written once, in T).
// Per query block of kBlockM rows (Q, dO, lse, D in shared memory, kStages deep) and per chunk of
// kQChunk of its queries, a warp computes for its keys, transposed so that its accumulators are
// rows of keys:
//   Sᵀ = K·Qᵀ, Pᵀ = 2^(Sᵀ · scale_log2 - lse · log2 e) (masked elements 0), dV += Pᵀ·dO,
//   dPᵀ = V·dOᵀ, dSᵀ = Pᵀ ∘ (dPᵀ - D), dK += dSᵀ·Q,
// Pᵀ and dSᵀ feeding the A operands of dV and dK straight from their accumulators (as P does
// P·V in the forward). dSᵀ also goes to shared memory; after a barrier the warps split the
// block's dQ = dS·K (kBlockM x kHeadDim) by rows and head_dim columns and add it to the FP32
// accumulator with atomics (the convert kernel applies softmax_scale; dK gets it at the end).
// Query rows past seqlen_q arrive zero-filled (Q, dO, lse and D), so they add nothing to dK and
// dV, and their dQ rows are not stored. At head_dim 256 (attn_bwd::head_dim_parts) two CTAs share
// a key block, each computing dK, dV and dQ for its half of the head_dim columns (kDCols) and Sᵀ,
// dPᵀ over the whole of it: 7 of the 10 FLOPs per (pair, column) a CTA, 1.4x the work, for dK
// and dV of half the registers. kDeterministic: CTAs take their (n_block, head, batch)
// from a ticket counter in CTA start order, and a CTA adds its dQ of query block m only after
// the CTA of the key block before it did (a semaphore per (batch, query head, query block)
// (and head_dim part) counting the key blocks added), so every dQ element is summed in key-block
// order: bitwise
// reproducible; a CTA waits only on CTAs that started before it, so it cannot deadlock.
// Launch: grid (⌈seqlen_k / kBlockN⌉, heads_kv, batch · parts), or kDeterministic the same count
// along x, 32 kWarps threads, AttentionBwdSmem<...>::kBytes of dynamic shared memory. Needs 16-byte
// aligned tensor bases and strides that are multiples of 8 elements; after
// attention_bwd_preprocess on the same stream.
// NOTE: __launch_bounds__ names one CTA an SM: without it ptxas (13.0) caps some head_dim 64
// configs at 168 registers (three CTAs of 128 threads an SM) and spills; with it none spills.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, int kWarps, int kStages, bool kCausal,
          bool kDeterministic>
__global__ void __launch_bounds__(kWarps * 32, 1)
    attention_bwd_sm80(const AttentionBwdParams params) {
  static_assert(DTypeTraits<T>::kIsMmaOperand && sizeof(T) == 2, "T must be kt::bf16 or kt::fp16");
  static_assert(kHeadDim == 64 || kHeadDim == 96 || kHeadDim == 128 || kHeadDim == 256,
                "kHeadDim must be 64, 96, 128 or 256");
  static_assert(kWarps == 4 || kWarps == 8, "kWarps must be 4 or 8");
  static_assert(kBlockN == 16 * kWarps || kBlockN == 32 * kWarps,
                "each warp owns 16 or 32 keys: kBlockN = 16 or 32 x kWarps");
  static_assert(kBlockM == 32 || kBlockM == 64 || kBlockM == 128, "kBlockM must be 32, 64 or 128");
  static_assert(kStages == 1 || kStages == 2, "kStages must be 1 or 2");
  using Smem = AttentionBwdSmem<kHeadDim, kBlockM, kBlockN, kStages>;
  static_assert(Smem::kBytes <= 227 * 1024,
                "more shared memory than any sm_80+ GPU gives a CTA (227 KB)");

  if (test_fault(params.dk)) return;
  constexpr int kThreads = kWarps * 32;
  constexpr int kKeysPerWarp = kBlockN / kWarps;
  constexpr int kNTiles = kKeysPerWarp / 16;  // m16 key tiles of a warp
  constexpr int kKSteps = kHeadDim / 16;      // k16 steps of Sᵀ and dPᵀ
  constexpr int kParts = attn_bwd::head_dim_parts(kHeadDim);
  constexpr int kDCols = kHeadDim / kParts;  // the head_dim columns of dK, dV and dQ of a CTA
  // Queries a warp works at once, as n8 tiles of Sᵀ and as k16 steps of dV and dK: their Sᵀ
  // (Pᵀ) and dPᵀ (dSᵀ) take kNTiles · kQChunk / 2 FP32 registers a thread each, fewer as dK and
  // dV (kNTiles · kDCols) take more: 16 queries at 96 or 128 columns or 32 keys a warp, else 32
  // (whole k16 steps).
  // NOTE: 32 queries at head_dim 128 leave ptxas (13.0) at 255 registers with spills in most
  // configs (sm_80 and sm_90a); 16 cost a fifth more ldmatrix and spill in none of them.
  constexpr int kQChunk = kDCols * kNTiles > 128 ? 8 : 2048 / (kDCols * kNTiles) / 16 * 16;
  constexpr int kChunkTiles = kQChunk / 8;
  constexpr int kChunkSteps = kQChunk / 16;
  constexpr int kDTiles = kDCols / 8;  // n8 head_dim tiles of dK and dV
  // dQ = dS·K: kDqWarpsM warps along the block's rows (kDqRowTiles m16 tiles each), kDqWarpsD
  // along the CTA's head_dim columns (kDqCols each, in passes of at most 64 columns to bound the
  // accumulators live beside dK and dV).
  constexpr int kDqWarpsM = kWarps < kBlockM / 16 ? kWarps : kBlockM / 16;
  constexpr int kDqWarpsD = kWarps / kDqWarpsM;
  constexpr int kDqRowTiles = kBlockM / 16 / kDqWarpsM;
  constexpr int kDqCols = kDCols / kDqWarpsD;
  constexpr int kDqPassCols = kDqCols <= 64 ? kDqCols : kDqCols % 64 == 0 ? 64 : 48;
  constexpr int kDqPasses = kDqCols / kDqPassCols;
  constexpr int kDqPassTiles = kDqPassCols / 8;
  static_assert(kQChunk >= 16, "dK and dV of 32 keys a warp at head_dim 128 exceed the registers");
  static_assert(kDqPassCols % 16 == 0 && kDqCols % kDqPassCols == 0,
                "dQ columns come in pairs of n8 tiles, in whole passes");
  using TileQ = SwizzledTile<kBlockM, kHeadDim>;   // Q and dO: queries x head_dim
  using TileKV = SwizzledTile<kBlockN, kHeadDim>;  // K and V: keys x head_dim
  using TileS = SwizzledTile<kBlockN, kBlockM>;    // dSᵀ: keys x queries

  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned int smem_k = shared_address(smem);
  const unsigned int smem_v = smem_k + TileKV::kBytes;
  const unsigned int smem_q = smem_v + TileKV::kBytes;  // stage s: Q, then dO
  const unsigned int smem_ds = smem_q + kStages * 2 * TileQ::kBytes;
  float* const stats = reinterpret_cast<float*>(smem + 2 * TileKV::kBytes +
                                                kStages * 2 * TileQ::kBytes + TileS::kBytes);

  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int seqlen_q = params.seqlen_q;
  const int seqlen_k = params.seqlen_k;
  const int num_m_blocks = (seqlen_q + kBlockM - 1) / kBlockM;

  unsigned int ticket = 0;
  if constexpr (kDeterministic) {
    // Tickets in CTA start order: a CTA waits only for CTAs of smaller tickets, which are
    // running or done.
    __shared__ unsigned int ticket_slot;
    if (tid == 0) ticket_slot = atomicAdd(params.dq_semaphores, 1u);
    __syncthreads();
    ticket = ticket_slot;
  }
  const attn_bwd::CtaWork work =
      attn_bwd::cta_work<kBlockM, kBlockN, kCausal, kDeterministic, kParts>(params, ticket);
  const int n_block = work.n_block, kv_head = work.kv_head, batch = work.batch;
  // The CTA's head_dim columns: from column d0 of global rows, and of shared tile rows from byte
  // d_bytes (whole 128-byte lines, so the swizzle within them is unchanged).
  static_assert(kParts == 1 || kDCols * 2 % 128 == 0, "a part is whole 128-byte lines of a row");
  const int d0 = work.part * kDCols;
  const unsigned int d_bytes = 2 * d0;
  const int group = work.group, m_first = work.m_first;
  const int steps_per_head = work.steps_per_head, num_steps = work.num_steps;
  const int n0 = n_block * kBlockN;
  const int diagonal = seqlen_k - seqlen_q;

  const T* k = static_cast<const T*>(params.k) + batch * params.k_stride.batch +
               kv_head * params.k_stride.head;
  const T* v = static_cast<const T*>(params.v) + batch * params.v_stride.batch +
               kv_head * params.v_stride.head;

  // Prologue: K and V of the block (group 0), the first step's Q, dO, lse and D (group 1).
  attn::copy_tile_async<kBlockN, kHeadDim, kThreads>(smem_k, k + n0 * params.k_stride.row,
                                                     params.k_stride.row, seqlen_k - n0, tid);
  attn::copy_tile_async<kBlockN, kHeadDim, kThreads>(smem_v, v + n0 * params.v_stride.row,
                                                     params.v_stride.row, seqlen_k - n0, tid);
  cp_async_commit();

  // Issues the copies of step `step` (query head, query block) into stage `stage`: Q and dO rows
  // (zero past seqlen_q), and their lse and D (zero past seqlen_q). Issues no commit.
  const auto load_step = [&](int step, int stage) {
    const int head = kv_head * group + step / steps_per_head;
    const int m0 = (m_first + step % steps_per_head) * kBlockM;
    const T* q = static_cast<const T*>(params.q) + batch * params.q_stride.batch +
                 head * params.q_stride.head + m0 * params.q_stride.row;
    const T* dout = static_cast<const T*>(params.dout) + batch * params.dout_stride.batch +
                    head * params.dout_stride.head + m0 * params.dout_stride.row;
    const unsigned int q_tile = smem_q + stage * 2 * TileQ::kBytes;
    attn::copy_tile_async<kBlockM, kHeadDim, kThreads>(q_tile, q, params.q_stride.row,
                                                       seqlen_q - m0, tid);
    attn::copy_tile_async<kBlockM, kHeadDim, kThreads>(q_tile + TileQ::kBytes, dout,
                                                       params.dout_stride.row, seqlen_q - m0, tid);
    const long long row0 = ((long long)batch * params.heads_q + head) * seqlen_q + m0;
    const unsigned int stats_tile = shared_address(stats + stage * 2 * kBlockM);
    for (int x = tid; x < 2 * kBlockM; x += kThreads) {
      const int r = x % kBlockM;
      const float* src = (x < kBlockM ? params.lse : params.d_rows) + row0 + r;
      const bool in_bounds = m0 + r < seqlen_q;
      cp_async_4(stats_tile + 4 * x, in_bounds ? src : params.lse, in_bounds ? 4u : 0u);
    }
  };
  if (num_steps > 0) load_step(0, 0);
  cp_async_commit();

  // ldmatrix lanes (see attention_fwd_sm80 for the four 8x8 matrices of each operand).
  // K and V as A of Sᵀ and dPᵀ (rows: this warp's keys, k: head_dim).
  const attn::LaneAddress<TileKV> lane_kv(warp * kKeysPerWarp + lane % 16, lane / 16);
  // Q and dO as B of Sᵀ and dPᵀ (n: queries, k: head_dim), stored n x k.
  const attn::LaneAddress<TileQ> lane_qn(lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
  // Q and dO as B of dK and dV (k: queries, n: head_dim), stored k x n: .trans.
  const attn::LaneAddress<TileQ> lane_qk(lane % 8 + ((lane / 8) % 2) * 8, lane / 16);
  // dSᵀ as A of dQ (rows: queries, k: keys), stored k x m: .trans.
  const attn::LaneAddress<TileS> lane_ds(lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
  // K as B of dQ (k: keys, n: head_dim), stored k x n: .trans.
  const attn::LaneAddress<TileKV> lane_kk(lane % 8 + ((lane / 8) % 2) * 8, lane / 16);

  float dk_acc[kNTiles][kDTiles][4];
  float dv_acc[kNTiles][kDTiles][4];
  zero_fragments(dk_acc);
  zero_fragments(dv_acc);

  // The key of accumulator rows lane / 4 (+ 16 nt + 8 r) and the query of columns 2 (lane % 4)
  // (+ 8 t + (e & 1)), relative to the block.
  const int key_row = warp * kKeysPerWarp + lane / 4;
  const int query_col = 2 * (lane % 4);
  const float scale_log2 = params.scale_log2;
  const int dq_warp_m = warp % kDqWarpsM;
  const int dq_warp_d = warp / kDqWarpsM;

#pragma unroll 1
  for (int step = 0; step < num_steps; ++step) {
    const int stage = kStages == 2 ? step & 1 : 0;
    const int head = kv_head * group + step / steps_per_head;
    const int m_block = m_first + step % steps_per_head;
    const int m0 = m_block * kBlockM;
    const unsigned int q_tile = smem_q + stage * 2 * TileQ::kBytes;
    const unsigned int do_tile = q_tile + TileQ::kBytes;
    const float* lse_rows = stats + stage * 2 * kBlockM;
    const float* d_rows = lse_rows + kBlockM;

    // This step's tiles landed, and every warp is done with the previous step (its stage, the
    // dSᵀ tile).
    cp_async_wait<0>();
    __syncthreads();
    if constexpr (kStages == 2) {
      if (step + 1 < num_steps) load_step(step + 1, stage ^ 1);
      cp_async_commit();
    }

    // Blocks crossing seqlen_k or (causal) the diagonal mask per element; a block whose first
    // row sees its last key needs no mask (rows past seqlen_q add nothing either way).
    bool masked = n0 + kBlockN > seqlen_k;
    if constexpr (kCausal) masked = masked || m0 + diagonal < n0 + kBlockN - 1;

      // The block's queries in chunks of kQChunk: each chunk's Sᵀ, Pᵀ, dPᵀ and dSᵀ live only while
      // the chunk is worked, beside dK and dV, whatever kBlockM is.
#pragma unroll 1
    for (int chunk = 0; chunk < kBlockM / kQChunk; ++chunk) {
      // Sᵀ = K·Qᵀ for the warp's keys and the chunk's queries, then Pᵀ in place.
      float s[kNTiles][kChunkTiles][4];
      zero_fragments(s);
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks) {
        unsigned int a[kNTiles][4];
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) ldmatrix_x4(a[nt], smem_k + lane_kv.at(nt, ks));
#pragma unroll
        for (int p = 0; p < kChunkTiles / 2; ++p) {
          unsigned int r[4];
          ldmatrix_x4(r, q_tile + lane_qn.at(chunk * kChunkTiles / 2 + p, ks));
          const unsigned int b0[2] = {r[0], r[1]};
          const unsigned int b1[2] = {r[2], r[3]};
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
            mma_m16n8k16<T>(s[nt][2 * p], a[nt], b0);
            mma_m16n8k16<T>(s[nt][2 * p + 1], a[nt], b1);
          }
        }
      }
#pragma unroll
      for (int t = 0; t < kChunkTiles; ++t) {
        const int col = chunk * kQChunk + 8 * t + query_col;
        const float lse_log2[2] = {lse_rows[col] * attn_bwd::kLog2e,
                                   lse_rows[col + 1] * attn_bwd::kLog2e};
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            float p = exp2_approx(s[nt][t][e] * scale_log2 - lse_log2[e & 1]);
            if (masked) {
              const int key = n0 + key_row + 16 * nt + 8 * (e / 2);
              const int query = m0 + col + (e & 1);
              const bool visible = key < seqlen_k && (!kCausal || key <= query + diagonal);
              p = visible ? p : 0.0f;
            }
            s[nt][t][e] = p;
          }
      }

      // dV += Pᵀ·dO: the C fragments of n8 tiles 2 kq and 2 kq + 1 of Pᵀ, converted to T in
      // pairs, are its A fragment of k16 step kq (as P·V in the forward).
#pragma unroll
      for (int kq = 0; kq < kChunkSteps; ++kq) {
        unsigned int a[kNTiles][4];
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) attn_bwd::pack_a_fragment<T>(s[nt], kq, a[nt]);
#pragma unroll
        for (int p = 0; p < kDTiles / 2; ++p) {
          unsigned int r[4];
          ldmatrix_x4_trans(r, do_tile + d_bytes + lane_qk.at(chunk * kChunkSteps + kq, p));
          const unsigned int b0[2] = {r[0], r[1]};
          const unsigned int b1[2] = {r[2], r[3]};
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
            mma_m16n8k16<T>(dv_acc[nt][2 * p], a[nt], b0);
            mma_m16n8k16<T>(dv_acc[nt][2 * p + 1], a[nt], b1);
          }
        }
      }

      // dPᵀ = V·dOᵀ, then dSᵀ = Pᵀ ∘ (dPᵀ - D) in place.
      float ds[kNTiles][kChunkTiles][4];
      zero_fragments(ds);
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks) {
        unsigned int a[kNTiles][4];
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) ldmatrix_x4(a[nt], smem_v + lane_kv.at(nt, ks));
#pragma unroll
        for (int p = 0; p < kChunkTiles / 2; ++p) {
          unsigned int r[4];
          ldmatrix_x4(r, do_tile + lane_qn.at(chunk * kChunkTiles / 2 + p, ks));
          const unsigned int b0[2] = {r[0], r[1]};
          const unsigned int b1[2] = {r[2], r[3]};
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
            mma_m16n8k16<T>(ds[nt][2 * p], a[nt], b0);
            mma_m16n8k16<T>(ds[nt][2 * p + 1], a[nt], b1);
          }
        }
      }
#pragma unroll
      for (int t = 0; t < kChunkTiles; ++t) {
        const int col = chunk * kQChunk + 8 * t + query_col;
        const float d[2] = {d_rows[col], d_rows[col + 1]};
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) ds[nt][t][e] = s[nt][t][e] * (ds[nt][t][e] - d[e & 1]);
      }

      // dK += dSᵀ·Q, and dSᵀ (as T) into its shared tile for dQ: the A fragment's words are the
      // pairs at (row, n8 tile) = (r, 2 kq), (r + 8, 2 kq), (r, 2 kq + 1), (r + 8, 2 kq + 1).
#pragma unroll
      for (int kq = 0; kq < kChunkSteps; ++kq) {
        unsigned int a[kNTiles][4];
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          attn_bwd::pack_a_fragment<T>(ds[nt], kq, a[nt]);
          const int row = key_row + 16 * nt;
          const int tile = chunk * kChunkTiles + 2 * kq;
#pragma unroll
          for (int w = 0; w < 4; ++w)
            st_shared_4(smem_ds + TileS::offset(row + 8 * (w % 2), tile + w / 2) + query_col * 2,
                        a[nt][w]);
        }
#pragma unroll
        for (int p = 0; p < kDTiles / 2; ++p) {
          unsigned int r[4];
          ldmatrix_x4_trans(r, q_tile + d_bytes + lane_qk.at(chunk * kChunkSteps + kq, p));
          const unsigned int b0[2] = {r[0], r[1]};
          const unsigned int b1[2] = {r[2], r[3]};
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
            mma_m16n8k16<T>(dk_acc[nt][2 * p], a[nt], b0);
            mma_m16n8k16<T>(dk_acc[nt][2 * p + 1], a[nt], b1);
          }
        }
      }
    }

    // dSᵀ is whole, and every warp is done with this stage's Q, dO, lse and D.
    __syncthreads();
    if constexpr (kStages == 1) {
      if (step + 1 < num_steps) load_step(step + 1, 0);
      cp_async_commit();
    }

    // The dQ semaphore of (batch, head, m_block, part): fewer than batch · heads_q · seqlen_q ·
    // parts words.
    const int semaphore =
        1 + ((batch * params.heads_q + head) * num_m_blocks + m_block) * kParts + work.part;
    if constexpr (kDeterministic) {
      // The key blocks before this one have added their dQ of this query block.
      if (tid == 0)
        while (ld_acquire_gpu(params.dq_semaphores + semaphore) != unsigned(n_block))
          nanosleep_ns(100);
      __syncthreads();
    }

    // dQ += dS·K for the warp's rows and head_dim columns, added to the accumulator.
    float* dq_block =
        params.dq_accum + (((long long)batch * params.heads_q + head) * seqlen_q + m0) * kHeadDim;
#pragma unroll
    for (int i = 0; i < kDqRowTiles; ++i) {
      const int row_tile = dq_warp_m + i * kDqWarpsM;
#pragma unroll
      for (int pass = 0; pass < kDqPasses; ++pass) {
        const int pair0 = (dq_warp_d * kDqCols + pass * kDqPassCols) / 16;  // of the CTA's
        float acc[kDqPassTiles][4];
#pragma unroll
        for (int t = 0; t < kDqPassTiles; ++t)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[t][e] = 0.0f;
#pragma unroll
        for (int kn = 0; kn < kBlockN / 16; ++kn) {
          unsigned int a[4];
          ldmatrix_x4_trans(a, smem_ds + lane_ds.at(kn, row_tile));
#pragma unroll
          for (int p = 0; p < kDqPassTiles / 2; ++p) {
            unsigned int r[4];
            ldmatrix_x4_trans(r, smem_k + d_bytes + lane_kk.at(kn, pair0 + p));
            const unsigned int b0[2] = {r[0], r[1]};
            const unsigned int b1[2] = {r[2], r[3]};
            mma_m16n8k16<T>(acc[2 * p], a, b0);
            mma_m16n8k16<T>(acc[2 * p + 1], a, b1);
          }
        }
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = 16 * row_tile + lane / 4 + 8 * half;
          if (m0 + row < seqlen_q) {
            float* dq_row = dq_block + row * kHeadDim + d0 + pair0 * 16 + query_col;
#pragma unroll
            for (int t = 0; t < kDqPassTiles; ++t) {
              red_add_f32(dq_row + 8 * t, acc[t][2 * half]);
              red_add_f32(dq_row + 8 * t + 1, acc[t][2 * half + 1]);
            }
          }
        }
      }
    }

    if constexpr (kDeterministic) {
      // Every thread's additions are issued; the release publishes them to the next key block.
      __syncthreads();
      if (tid == 0) st_release_gpu(params.dq_semaphores + semaphore, unsigned(n_block + 1));
    }
  }
  // Only empty groups (or, without steps, K and V) can remain; drain them.
  cp_async_wait<0>();

  // dK (times softmax_scale) and dV of the warp's keys inside seqlen_k, in T.
  T* dk =
      static_cast<T*>(params.dk) + batch * params.dk_stride.batch + kv_head * params.dk_stride.head;
  T* dv =
      static_cast<T*>(params.dv) + batch * params.dv_stride.batch + kv_head * params.dv_stride.head;
  const float scale = params.softmax_scale;
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = n0 + key_row + 16 * nt + 8 * half;
      if (key >= seqlen_k) continue;
      T* dk_row = dk + key * params.dk_stride.row + d0 + query_col;
      T* dv_row = dv + key * params.dv_stride.row + d0 + query_col;
#pragma unroll
      for (int t = 0; t < kDTiles; ++t) {
        *reinterpret_cast<unsigned int*>(dk_row + 8 * t) = DTypeTraits<T>::pack2(
            dk_acc[nt][t][2 * half] * scale, dk_acc[nt][t][2 * half + 1] * scale);
        *reinterpret_cast<unsigned int*>(dv_row + 8 * t) =
            DTypeTraits<T>::pack2(dv_acc[nt][t][2 * half], dv_acc[nt][t][2 * half + 1]);
      }
    }
}

}  // namespace kt
