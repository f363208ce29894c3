// The sm_80 FlashAttention-2 forward: O = softmax(scale · Q·Kᵀ) · V per (batch, head) with online
// softmax in FP32 registers, mma.sync m16n8k16 for both products, P reused from registers as the
// A operand of P·V, and K/V tiles streamed through XOR-swizzled shared memory by cp.async.
// Instantiated by NVRTC name expressions (kt::attention_fwd_sm80<...>); runs on sm_80 and later.
#pragma once

#include "kerntune/attention/attention_params.h"
#include "kerntune/attention/attention_sequence.cuh"
#include "kerntune/attention/softmax_rows.cuh"
#include "kerntune/attention/tile_io_sm80.cuh"
#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm80.cuh"
#include "kerntune/common/swizzled_tile.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/common/work_order.h"

namespace kt {

// Dynamic shared memory of attention_fwd_sm80: the Q tile (reused to stage O) and kStages K and V
// tiles, all kHeadDim 16-bit elements per row.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, int kWarps, int kStages, bool kCausal,
          bool kWriteLse>
struct AttentionFwdSmem {
  static constexpr int kBytes = kBlockM * kHeadDim * 2 + kStages * 2 * kBlockN * kHeadDim * 2;
};

// O = softmax(softmax_scale · Q·Kᵀ) · V (see AttentionParams for layouts; FlashAttention
// conventions: causal is aligned bottom-right, key j visible to query i iff
// j <= i + seqlen_k - seqlen_q; a row with no visible key gets O = 0 and lse = -inf).
// One CTA computes kBlockM query rows of one (head, batch); each warp owns kBlockM / kWarps = 16
// or 32 consecutive rows, i.e. kMTiles = 1 or 2 m16 row tiles, and keeps the kMTiles x 16 x
// kHeadDim O accumulator, the kMTiles x 16 x kBlockN scores and the running row max / sum in
// registers; every K fragment (for S) and V fragment (for P·V) it loads feeds all of its row
// tiles, so 32 rows per warp halve the shared-memory traffic per mma. Q stays in registers as mma
// A fragments while they fit (head_dim <= 128 at 16 rows, <= 64 at 32 rows); otherwise each k16
// step re-reads them from the resident Q tile. K/V blocks are visited from the
// last visible one down to block 0, so the blocks that need a per-element mask (the seqlen_k tail
// and, for causal, those crossing the diagonal) come first and set the running max early.
// kStages 2: K and V of block n - 1 load during all of block n's work (one barrier per block);
// kStages 1: V of block n loads during Q·Kᵀ, K of block n - 1 during softmax and P·V.
// kWriteLse: also writes lse = log Σ_j exp(S_ij) (natural log) to params.lse.
// Packed variable-length batches (params.cu_seqlens_q set): each sequence is addressed from its
// first rows (attn::sequence_of) and CTAs past its end leave at once.
// Launch: grid (ceil(seqlen_q / kBlockM), heads_q, batch), 32 kWarps threads,
// AttentionFwdSmem<...>::kBytes of dynamic shared memory; causal CTAs take the tile of
// common/work_order.h's order at their linear blockIdx (the longest query block first over
// sections of params.causal_section (head, batch) entries). Needs 16-byte aligned Q/K/V/O bases
// and row/head/batch strides that are multiples of 8 elements.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, int kWarps, int kStages, bool kCausal,
          bool kWriteLse>
__global__ void __launch_bounds__(kWarps * 32) attention_fwd_sm80(const AttentionParams params) {
  static_assert(DTypeTraits<T>::kIsMmaOperand && sizeof(T) == 2, "T must be kt::bf16 or kt::fp16");
  static_assert(kHeadDim == 64 || kHeadDim == 96 || kHeadDim == 128 || kHeadDim == 256,
                "kHeadDim must be 64, 96, 128 or 256");
  static_assert(kWarps == 4 || kWarps == 8, "kWarps must be 4 or 8");
  static_assert(kBlockM == 16 * kWarps || kBlockM == 32 * kWarps,
                "each warp owns 16 or 32 query rows: kBlockM = 16 * kWarps or 32 * kWarps");
  static_assert(kBlockN == 32 || kBlockN == 64 || kBlockN == 128, "kBlockN must be 32, 64 or 128");
  static_assert(kStages == 1 || kStages == 2, "kStages must be 1 or 2");
  static_assert(AttentionFwdSmem<T, kHeadDim, kBlockM, kBlockN, kWarps, kStages, kCausal,
                                 kWriteLse>::kBytes <= 227 * 1024,
                "more shared memory than any sm_80+ GPU gives a CTA (227 KB)");

  if (test_fault(params.o)) return;
  constexpr int kThreads = kWarps * 32;
  constexpr int kRowsPerWarp = kBlockM / kWarps;
  constexpr int kMTiles = kRowsPerWarp / 16;  // m16 row tiles of a warp
  constexpr int kKSteps = kHeadDim / 16;      // k16 steps of Q·Kᵀ
  constexpr int kSTiles = kBlockN / 8;        // n8 tiles of a row tile's scores
  constexpr int kPSteps = kBlockN / 16;       // k16 steps of P·V
  constexpr int kOTiles = kHeadDim / 8;       // n8 tiles of a row tile's O
  using TileQ = SwizzledTile<kBlockM, kHeadDim>;
  using TileKV = SwizzledTile<kBlockN, kHeadDim>;

  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned int smem_q = shared_address(smem);
  const unsigned int smem_k = smem_q + TileQ::kBytes;
  const unsigned int smem_v = smem_k + kStages * TileKV::kBytes;

  const int thread = threadIdx.x;
  const int lane = thread % 32;
  const int warp = thread / 32;
  // Causal CTAs of larger m blocks visit more K/V blocks; the heaviest start first.
  int m_block = blockIdx.x, head = blockIdx.y, batch = blockIdx.z;
  if constexpr (kCausal) {
    const int index = int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
    const WorkSlot slot =
        sectioned_slot(index, int(gridDim.x), int(gridDim.y * gridDim.z), params.causal_section);
    m_block = int(gridDim.x) - 1 - slot.block;
    head = slot.entry % int(gridDim.y);
    batch = slot.entry / int(gridDim.y);
  }
  const int kv_head = head / (params.heads_q / params.heads_kv);
  const attn::Sequence seq = attn::sequence_of(params, batch);
  const int seqlen_q = seq.seqlen_q;
  const int seqlen_k = seq.seqlen_k;
  const int m0 = m_block * kBlockM;
  if (m0 >= seqlen_q) return;  // a packed batch's shorter sequence: the grid fits the longest

  const T* q = static_cast<const T*>(params.q) + batch * params.q_stride.batch +
               head * params.q_stride.head + (seq.q_begin + m0) * params.q_stride.row;
  const T* k = static_cast<const T*>(params.k) + batch * params.k_stride.batch +
               kv_head * params.k_stride.head + seq.k_begin * params.k_stride.row;
  const T* v = static_cast<const T*>(params.v) + batch * params.v_stride.batch +
               kv_head * params.v_stride.head + seq.k_begin * params.v_stride.row;

  // Key j is visible to query i iff j < seqlen_k and (causal) j <= i + diagonal.
  const int diagonal = seqlen_k - seqlen_q;
  const int rows_in_block = seqlen_q - m0 < kBlockM ? seqlen_q - m0 : kBlockM;
  // One past the last key that a row of this block sees (rows past seqlen_q are ignored).
  const int key_end = kCausal ? m0 + rows_in_block + diagonal : seqlen_k;
  const int num_blocks = key_end > 0 ? (key_end + kBlockN - 1) / kBlockN : 0;
  // Blocks below num_full_blocks are visible to every row of the CTA: no mask.
  int num_full_blocks = seqlen_k / kBlockN;
  if constexpr (kCausal) {
    const int first_row_end = m0 + diagonal + 1;  // keys visible to row m0
    const int full = first_row_end > 0 ? first_row_end / kBlockN : 0;
    num_full_blocks = full < num_full_blocks ? full : num_full_blocks;
  }

  // kWholeCopies: the K/V copies of whole blocks (all but the first block visited, which may hold
  // the seqlen_k tail) drop the per-copy row check (kFull of copy_tile_async), about half the
  // integer instructions of the copies. Limited to the config where ptxas was checked to allocate
  // no more registers or spills for it on sm_80 and sm_90 (d128, 64 x 128 blocks, four warps, one
  // stage); elsewhere the new schedule costs registers or spills in some variants.
  constexpr bool kWholeCopies =
      kHeadDim == 128 && kWarps == 4 && kBlockM == 64 && kBlockN == 128 && kStages == 1;

  // Prologue: Q (group 0); K of the first block visited, and its V when kStages is 2 (group 1).
  attn::copy_tile_async<kBlockM, kHeadDim, kThreads>(smem_q, q, params.q_stride.row, rows_in_block,
                                                     thread);
  cp_async_commit();
  if (num_blocks > 0) {
    const int n0 = (num_blocks - 1) * kBlockN;
    attn::copy_tile_async<kBlockN, kHeadDim, kThreads>(smem_k, k + n0 * params.k_stride.row,
                                                       params.k_stride.row, seqlen_k - n0, thread);
    if constexpr (kStages == 2) {
      attn::copy_tile_async<kBlockN, kHeadDim, kThreads>(
          smem_v, v + n0 * params.v_stride.row, params.v_stride.row, seqlen_k - n0, thread);
    }
  }
  cp_async_commit();

  // ldmatrix lanes. Q (A, m16k16): matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7),
  // (rows 0-7, k 8-15), (rows 8-15, k 8-15) are a0..a3; row tile mt is 16 rows further. K (B
  // from an n x k tile): (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, k 0-7), (keys 8-15,
  // k 8-15) are {b0, b1} of two n8 fragments. V (B from a k x n tile, through .trans): (keys 0-7,
  // d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 8-15), the same.
  const attn::LaneAddress<TileQ> lane_q(warp * kRowsPerWarp + lane % 16, lane / 16);
  const attn::LaneAddress<TileKV> lane_k(lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
  const attn::LaneAddress<TileKV> lane_v(lane % 8 + ((lane / 8) % 2) * 8, lane / 16);

  // Q landed (every thread waited for its own copies; the barrier publishes them to all).
  cp_async_wait<1>();
  __syncthreads();
  // Q stays in registers for the whole loop while it fits next to O and S: 16 rows up to
  // head_dim 128, 32 rows up to head_dim 64. Otherwise each k16 step re-reads its fragments from
  // the resident Q tile (only this warp's rows, which the loop never overwrites).
  constexpr bool kQInRegisters = kMTiles == 1 ? kHeadDim <= 128 : kHeadDim <= 64;
  unsigned int q_frag[kQInRegisters ? kKSteps : 1][kMTiles][4];
  if constexpr (kQInRegisters) {
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) ldmatrix_x4(q_frag[ks][mt], smem_q + lane_q.at(mt, ks));
  }

  // Rows row0 + 16 mt and row0 + 16 mt + 8 of the block (accumulator elements 0-1 and 2-3 of row
  // tile mt), row0 = kRowsPerWarp warp + lane / 4; columns 2 (lane % 4) + {0, 1} of each n8 tile.
  const int row0 = m0 + warp * kRowsPerWarp + lane / 4;
  int col_limit[kMTiles][2];  // keys >= col_limit[mt][r] are masked for row row0 + 16 mt + 8 r
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int causal_end = row0 + 16 * mt + 8 * r + diagonal + 1;
      col_limit[mt][r] = kCausal && causal_end < seqlen_k ? causal_end : seqlen_k;
    }

  const float scale_log2 = params.scale_log2;
  float o[kMTiles][kOTiles][4];
  zero_fragments(o);
  float row_max[kMTiles][2];  // raw Q·Kᵀ units
  float row_sum[kMTiles][2];  // this lane's part; the quad's lanes sum at the end
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = attn::negative_infinity();
      row_sum[mt][r] = 0.0f;
    }

#pragma unroll 1
  for (int it = 0; it < num_blocks; ++it) {
    const int n_block = num_blocks - 1 - it;
    const int n0 = n_block * kBlockN;
    const int stage = kStages == 2 ? it & 1 : 0;
    const unsigned int k_tile = smem_k + stage * TileKV::kBytes;
    const unsigned int v_tile = smem_v + stage * TileKV::kBytes;

    // K of this block landed, and every warp is done with the previous block (its stage, or the
    // single V tile, may be overwritten now).
    cp_async_wait<0>();
    __syncthreads();
    if constexpr (kStages == 2) {
      if (n_block > 0) {
        const int next0 = n0 - kBlockN;
        // Blocks below the first one visited end at or before (num_blocks - 1) kBlockN < key_end
        // <= seqlen_k: whole blocks.
        attn::copy_tile_async<kBlockN, kHeadDim, kThreads, kWholeCopies>(
            smem_k + (stage ^ 1) * TileKV::kBytes, k + next0 * params.k_stride.row,
            params.k_stride.row, kBlockN, thread);
        attn::copy_tile_async<kBlockN, kHeadDim, kThreads, kWholeCopies>(
            smem_v + (stage ^ 1) * TileKV::kBytes, v + next0 * params.v_stride.row,
            params.v_stride.row, kBlockN, thread);
      }
    } else {
      if (kWholeCopies && n0 + kBlockN <= seqlen_k) {  // every block but the seqlen_k tail
        attn::copy_tile_async<kBlockN, kHeadDim, kThreads, kWholeCopies>(
            v_tile, v + n0 * params.v_stride.row, params.v_stride.row, kBlockN, thread);
      } else {
        attn::copy_tile_async<kBlockN, kHeadDim, kThreads>(
            v_tile, v + n0 * params.v_stride.row, params.v_stride.row, seqlen_k - n0, thread);
      }
    }
    cp_async_commit();

    // S = Q·Kᵀ for the warp's rows and the block's kBlockN keys; each K fragment feeds every row
    // tile.
    float s[kMTiles][kSTiles][4];
    zero_fragments(s);
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      const int qs = kQInRegisters ? ks : 0;
      if constexpr (!kQInRegisters) {
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) ldmatrix_x4(q_frag[0][mt], smem_q + lane_q.at(mt, ks));
      }
#pragma unroll
      for (int p = 0; p < kSTiles / 2; ++p) {
        unsigned int r[4];
        ldmatrix_x4(r, k_tile + lane_k.at(p, ks));
        const unsigned int b0[2] = {r[0], r[1]};
        const unsigned int b1[2] = {r[2], r[3]};
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_m16n8k16<T>(s[mt][2 * p], q_frag[qs][mt], b0);
          mma_m16n8k16<T>(s[mt][2 * p + 1], q_frag[qs][mt], b1);
        }
      }
    }

    if (n_block >= num_full_blocks) {
      // The seqlen_k tail or the causal diagonal: masked scores are -inf.
      const int col0 = n0 + (lane % 4) * 2;
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int t = 0; t < kSTiles; ++t)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (col0 + t * 8 + (e & 1) >= col_limit[mt][e / 2])
              s[mt][t][e] = attn::negative_infinity();
    }

    if constexpr (kStages == 1) {
      // V of this block landed, and every warp is done with K: load the next block's K.
      cp_async_wait<0>();
      __syncthreads();
      if (n_block > 0) {
        const int next0 = n0 - kBlockN;
        attn::copy_tile_async<kBlockN, kHeadDim, kThreads, kWholeCopies>(
            smem_k, k + next0 * params.k_stride.row, params.k_stride.row, kBlockN, thread);
      }
      cp_async_commit();
    }

    // Online softmax: new running max, rescale of the old sum and O by 2^((m_old - m_new) c),
    // P = 2^(S c - m_new c) with c = scale_log2. A row whose max is still -inf (no visible key
    // yet) uses 0 as its scaled max, so it gets P = 0 and a factor of 0 instead of NaN.
    // kSkipRescale: the rescale is skipped for a row tile when no row of the warp's tile raised
    // its max (a warp vote, so the branch is uniform): the factor would be 1 for every row.
    // After the first few blocks of a long row that is most blocks; it saves 4 kOTiles + 2
    // multiplies per row tile and lane. (A rescaled row whose max did not change gets
    // 2^(m c - round(m c)), the contracted difference, within an ulp or two of 1, as before.)
    // Where the branch and the factors go is what ptxas allocates without spills (sm_80 and
    // sm_90): one row tile rescales after P and computes the factors in the branch; two row
    // tiles rescale before P with the factors computed next to the max; two row tiles of 64
    // keys at head_dim 128 (255 registers) keep the unconditional rescale after P.
    // With two row tiles of 32 keys, P is packed to T pairs (the A fragments of P·V, see below)
    // as soon as it is computed: ptxas then fits head_dim 128 causal in 255 registers without
    // spills (packing in the P·V loop spills there; packing early spills more at kBlockN 64).
    constexpr bool kPackEarly = kMTiles == 2 && kBlockN == 32;
    constexpr bool kSkipRescale = !(kMTiles == 2 && kBlockN == 64 && kHeadDim == 128);
    constexpr bool kRescaleBeforeP = kSkipRescale && kMTiles == 2;
    constexpr bool kEagerFactors = kMTiles == 2;
    unsigned int p_frag[kPackEarly ? kMTiles : 1][kPackEarly ? kPSteps : 1][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      float scaled_max[2];
      float correction[2];
      float old_max[2];
      bool raised = false;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float m = row_max[mt][r];
#pragma unroll
        for (int t = 0; t < kSTiles; ++t) m = fmaxf(m, fmaxf(s[mt][t][2 * r], s[mt][t][2 * r + 1]));
        m = attn::quad_reduce<true>(m);
        scaled_max[r] = m == attn::negative_infinity() ? 0.0f : m * scale_log2;
        raised = raised || m > row_max[mt][r];
        old_max[r] = row_max[mt][r];
        if constexpr (kEagerFactors)
          correction[r] = exp2_approx(old_max[r] * scale_log2 - scaled_max[r]);
        row_max[mt][r] = m;
      }
      // O and this lane's sum times the factors (exp2 of -inf rows gives 0, of others <= 1).
      const auto rescale = [&] {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          if constexpr (!kEagerFactors)
            correction[r] = exp2_approx(old_max[r] * scale_log2 - scaled_max[r]);
          row_sum[mt][r] *= correction[r];
        }
#pragma unroll
        for (int t = 0; t < kOTiles; ++t)
#pragma unroll
          for (int e = 0; e < 4; ++e) o[mt][t][e] *= correction[e / 2];
      };
      if constexpr (kRescaleBeforeP) {
        if (__any_sync(0xFFFFFFFFu, raised)) rescale();
      }
      float block_sum[2] = {0.0f, 0.0f};
#pragma unroll
      for (int t = 0; t < kSTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[mt][t][e] = exp2_approx(s[mt][t][e] * scale_log2 - scaled_max[e / 2]);
          block_sum[e / 2] += s[mt][t][e];
        }
        if constexpr (kPackEarly) {
          p_frag[mt][t / 2][2 * (t % 2)] = DTypeTraits<T>::pack2(s[mt][t][0], s[mt][t][1]);
          p_frag[mt][t / 2][2 * (t % 2) + 1] = DTypeTraits<T>::pack2(s[mt][t][2], s[mt][t][3]);
        }
      }
      if constexpr (!kSkipRescale) {
        rescale();
      } else if constexpr (!kRescaleBeforeP) {
        if (__any_sync(0xFFFFFFFFu, raised)) rescale();
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) row_sum[mt][r] += block_sum[r];
    }

    // O += P·V. The C fragments of n8 tiles 2 kk and 2 kk + 1 of a row tile (rows g, g + 8;
    // columns 2 (lane % 4) + {0, 1} of each) are, converted to T in pairs, exactly its A fragment
    // of k16 step kk; each V fragment feeds every row tile.
#pragma unroll
    for (int kk = 0; kk < kPSteps; ++kk) {
      unsigned int a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        if constexpr (kPackEarly) {
#pragma unroll
          for (int i = 0; i < 4; ++i) a[mt][i] = p_frag[mt][kk][i];
        } else {
          a[mt][0] = DTypeTraits<T>::pack2(s[mt][2 * kk][0], s[mt][2 * kk][1]);
          a[mt][1] = DTypeTraits<T>::pack2(s[mt][2 * kk][2], s[mt][2 * kk][3]);
          a[mt][2] = DTypeTraits<T>::pack2(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
          a[mt][3] = DTypeTraits<T>::pack2(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
        }
      }
#pragma unroll
      for (int p = 0; p < kOTiles / 2; ++p) {
        unsigned int r[4];
        ldmatrix_x4_trans(r, v_tile + lane_v.at(kk, p));
        const unsigned int b0[2] = {r[0], r[1]};
        const unsigned int b1[2] = {r[2], r[3]};
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_m16n8k16<T>(o[mt][2 * p], a[mt], b0);
          mma_m16n8k16<T>(o[mt][2 * p + 1], a[mt], b1);
        }
      }
    }
  }
  // Only empty groups can remain; drain them so no copy is in flight when the CTA exits.
  cp_async_wait<0>();

  // Normalize: O /= l, lse = m · softmax_scale + ln l; a row with no visible key has l = 0.
  float inv_sum[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float sum = attn::quad_reduce<false>(row_sum[mt][r]);
      inv_sum[mt][r] = sum > 0.0f ? 1.0f / sum : 0.0f;
      if constexpr (kWriteLse) {
        const int row = row0 + 16 * mt + 8 * r;
        if (lane % 4 == 0 && row < seqlen_q && params.lse != nullptr) {
          const float lse = sum > 0.0f ? row_max[mt][r] * params.softmax_scale + logf(sum)
                                       : attn::negative_infinity();
          params.lse[attn::lse_index(params, seq, batch, head, row)] = lse;
        }
      }
    }

  // Stage the warp's rows of O (as T) in its own rows of the Q tile, which only this warp reads,
  // then store whole 16-byte chunks of the rows inside seqlen_q.
  __syncwarp();
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int t = 0; t < kOTiles; ++t) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = warp * kRowsPerWarp + 16 * mt + lane / 4 + 8 * r;
        st_shared_4(smem_q + TileQ::offset(row, t) + (lane % 4) * 4,
                    DTypeTraits<T>::pack2(o[mt][t][2 * r] * inv_sum[mt][r],
                                          o[mt][t][2 * r + 1] * inv_sum[mt][r]));
      }
    }
  __syncwarp();
  T* out = static_cast<T*>(params.o) + batch * params.o_stride.batch + head * params.o_stride.head +
           (seq.q_begin + m0) * params.o_stride.row;
  constexpr int kChunksPerRow = TileQ::kChunksPerRow;
#pragma unroll
  for (int it = 0; it < kRowsPerWarp * kChunksPerRow / 32; ++it) {
    const int idx = lane + it * 32;
    const int row = warp * kRowsPerWarp + idx / kChunksPerRow;
    const int chunk = idx % kChunksPerRow;
    if (row < rows_in_block) {
      unsigned int chunk_data[4];
      ld_shared_16(chunk_data, smem_q + TileQ::offset(row, chunk));
      st_global_16(out + row * params.o_stride.row + chunk * 8, chunk_data);
    }
  }
}

}  // namespace kt
