// The sm_90a FlashAttention backward (the "fa3" family) on wgmma, warp-specialized: dQ, dK, dV of
// O = softmax(scale · Q·Kᵀ) · V from dO, recomputing P from Q, K and the forward's logsumexp;
// attention_bwd_sm90 runs between the row kernels of attention_bwd_rows.cuh. A producer thread
// loads the CTA's K and V once and streams each step's Q, dO, lse_log2 and D by TMA into a ring of
// stages guarded by full/empty mbarriers; each consumer warpgroup owns 64 of the CTA's keys (at
// head_dim 256: two consumers share the same 64, each with half the head_dim columns and half the
// step's query rows), keeps their dK and dV in FP32 registers and computes transposed products
// (its keys are the wgmma's M), so Pᵀ and dSᵀ feed dV and dK straight from registers (at head_dim
// 256 from shared memory); dSᵀ also goes to shared memory (stmatrix, transposed) for dQ = dS·K,
// which each step stages in FP32 and adds to the accumulator by TMA reductions.
// Instantiated by NVRTC name expressions (kt::attention_bwd_sm90<...>); sm_90a only.
#pragma once

#include "kerntune/attention_backward/attention_bwd_params.h"
#include "kerntune/attention_backward/attention_bwd_rows.cuh"
#include "kerntune/attention_backward/attention_bwd_sm90_layout.h"
#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/common/stage_ring.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/common/wgmma_slab.cuh"

namespace kt {
namespace fa3_bwd {

constexpr int kKeys = 64;  // keys a consumer warpgroup owns: one m64 wgmma
// Named barriers: 1 + c is consumer c's own, kAllConsumers every consumer's.
constexpr int kAllConsumers = 3;
// head_dim columns of dQ a consumer computes and stages at once when it stages dQ in the step's
// stage (head_dim 256).
constexpr int kDqPassColumns = 64;

// Consumer warpgroups of a CTA: one per 64 keys, times the head_dim parts that share those keys.
__host__ __device__ constexpr int consumers(int head_dim, int block_n) {
  return block_n / kKeys * attn_bwd::head_dim_parts(head_dim);
}

// Register split (setmaxnreg) of a CTA of two consumers and the producer, launched with 168
// registers a thread: 24 + 2 x attn_bwd::kFa3ConsumerRegisters (240) = 3 x 168. One consumer
// keeps the 255 it is launched with.
constexpr int kProducerRegisters = 24;

// How dQ = dS·K (kBlockM x kHeadDim over the block's keys) splits among the consumers: by m64
// row tiles while there are as many as consumers, else also by head_dim columns, in whole
// 64-column slabs of K (K is dQ's N-major B operand, whose descriptor steps whole slabs).
// Consumer c computes kRowTiles row tiles from first_row_tile(c), kCols columns from first_col(c),
// and stages them in its kStagingBytes of FP32 as kCols / 32 column slabs of kRowTiles boxes.
// Transposed (attn_bwd::fa3_dq_transposed: block_m 80, one row tile), consumer c computes the
// same columns as the M rows of dQᵀ for all kBlockM query rows, staged as kCols / 32 boxes of
// kBlockM rows.
template <int kHeadDim, int kBlockM, int kConsumers>
struct DqSplit {
  static constexpr int kMTiles = kBlockM / 64;
  static constexpr int kRowTiles = kMTiles >= kConsumers ? kMTiles / kConsumers : 1;
  static constexpr int kColParts = kConsumers / (kMTiles / kRowTiles);
  static constexpr int kCols = kHeadDim / kColParts;
  static constexpr int kStagingBytes =
      (attn_bwd::fa3_dq_transposed(kBlockM) ? kBlockM : kRowTiles * 64) * kCols * 4;
  static_assert(kCols % 64 == 0, "dQ splits among the consumers by 64-column slabs of K");

  static __device__ __forceinline__ int first_row_tile(int c) { return c / kColParts * kRowTiles; }
  static __device__ __forceinline__ int first_col(int c) { return c % kColParts * kCols; }
};

// Stores a consumer's dSᵀ (64 keys x 16 kSteps queries, as the A registers of wgmma_m64k16_rs:
// ds[t] is query k16 step t) transposed into its atom of the dS tile, the K-major A operand of
// dQ = dS·K: query row q at q · 128 bytes holds the consumer's 64 keys, 16-byte chunk c at chunk
// c ^ (q % 8) (the 128B swizzle; `atom` is 1024-byte aligned). Register r of step t is the 8x8
// matrix of keys 16 warp + 8 (r & 1) (chunk 2 warp + (r & 1)) and queries 16 t + 8 (r >> 1);
// stmatrix's transpose writes that matrix's query rows, lane l addressing row l % 8 of matrix
// l / 8. The eight rows of a matrix land in eight distinct chunks: no bank conflict.
template <int kSteps>
__device__ __forceinline__ void store_ds_transposed(unsigned int atom,
                                                    const unsigned int (&ds)[kSteps][4], int warp,
                                                    int lane) {
  const int matrix = lane >> 3;
  const int chunk = 2 * warp + (matrix & 1);
#pragma unroll
  for (int t = 0; t < kSteps; ++t) {
    const int query = 16 * t + 8 * (matrix >> 1) + (lane & 7);
    stmatrix_x4_trans(atom + query * 128 + ((chunk ^ (lane & 7)) << 4), ds[t][0], ds[t][1],
                      ds[t][2], ds[t][3]);
  }
}

// dQ (+)= dS·K of a consumer's kRowTiles row tiles and 2 kAcc columns, one committed wgmma group
// over kNSteps k16 steps of keys: A K-major from the dS tile at `ds_tile` (row tiles from
// `row_tile`, atoms of 64 keys `atom_bytes` apart), B N-major from K (the columns' first slab at
// `k_slab`, slabs `slab_bytes` apart).
template <typename T, int kRowTiles, int kAcc, int kNSteps>
__device__ __forceinline__ void issue_dq(float (&dq)[kRowTiles][kAcc], unsigned int ds_tile,
                                         int row_tile, int atom_bytes, unsigned int k_slab,
                                         int slab_bytes) {
#pragma unroll
  for (int i = 0; i < kRowTiles; ++i) fence_accumulators(dq[i]);
  wgmma_fence();
#pragma unroll
  for (int kt = 0; kt < kNSteps; ++kt)
#pragma unroll
    for (int i = 0; i < kRowTiles; ++i)
      wgmma_m64k16_ss<T, 2 * kAcc, 1>(dq[i],
                                      kmajor_descriptor(ds_tile + (kt / 4) * atom_bytes +
                                                        (row_tile + i) * 64 * 128 + 32 * (kt % 4)),
                                      mnmajor_descriptor(k_slab + 2048 * kt, slab_bytes), kt > 0);
  wgmma_commit();
}

// dQᵀ = Kᵀ·dSᵀ of a consumer's 64 head_dim rows and the step's kBlockM query rows over kNSteps
// k16 steps of keys, one committed wgmma group: A M-major from its 64-column slab of K (at
// `k_slab`), B K-major from the dS tile (atoms of 64 keys `atom_bytes` apart).
template <typename T, int kBlockM, int kNSteps>
__device__ __forceinline__ void issue_dq_transposed(float (&dqt)[kBlockM / 2], unsigned int k_slab,
                                                    int slab_bytes, unsigned int ds_tile,
                                                    int atom_bytes) {
  fence_accumulators(dqt);
  wgmma_fence();
#pragma unroll
  for (int kt = 0; kt < kNSteps; ++kt)
    wgmma_m64k16_ss<T, kBlockM, 0, 1>(
        dqt, mnmajor_descriptor(k_slab + 2048 * kt, slab_bytes),
        kmajor_descriptor(ds_tile + (kt / 4) * atom_bytes + 32 * (kt % 4)), kt > 0);
  wgmma_commit();
}

// Stages a consumer's dQᵀ (64 head_dim rows x kBlockM query rows of wgmma accumulators)
// transposed for TMA reductions: box b (head_dim rows 32 b to 32 b + 31) is kBlockM query rows of
// 128 bytes at `staging` + b kBlockM 128, element (r, q) in row q at 16-byte chunk
// (r % 32) / 4 ^ (q % 8) (the 128B swizzle). One store of a warp writes 8 head_dim rows (two
// chunks of four words) of 4 query rows of distinct q % 8: 32 distinct banks.
template <int kBlockM>
__device__ __forceinline__ void stage_dq_transposed(unsigned int staging,
                                                    const float (&dqt)[kBlockM / 2], int warp,
                                                    int lane) {
#pragma unroll
  for (int j = 0; j < kBlockM / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = 16 * warp + lane / 4 + 8 * (e >> 1);
      const int q = 8 * j + 2 * (lane % 4) + (e & 1);
      st_shared_4(staging + (r / 32) * kBlockM * 128 + q * 128 + ((((r % 32) / 4) ^ (q % 8)) << 4) +
                      (r % 4) * 4,
                  __float_as_uint(dqt[4 * j + e]));
    }
}

}  // namespace fa3_bwd

// dK, dV of kBlockN keys of one key/value head and the dQ they add (conventions of
// attention_bwd_sm80: causal bottom-right aligned, key j visible to query i iff j <= i + seqlen_k
// - seqlen_q; a row that sees no key contributes nothing). One CTA per (key block n_block,
// key/value head, batch), 128 (kConsumers + 1) threads: warpgroup 0 is the producer, whose
// thread 0 issues every TMA load; warpgroup 1 + c is consumer c, owning keys [64 c, 64 c + 64) of
// the block and every head_dim column. The CTA walks its steps, every (query head of its
// key/value head, query block of kBlockM rows that sees a key of the block), head-major. Per step
// a consumer computes, for its keys, with both operands in shared memory:
//   Sᵀ = K·Qᵀ, dPᵀ = V·dOᵀ (64 x kBlockM each, two wgmma groups),
//   Pᵀ = 2^(Sᵀ · scale_log2 - lse_log2) (0 where masked: keys past seqlen_k, rows past seqlen_q,
//   right of the causal diagonal), dSᵀ = Pᵀ ∘ (dPᵀ - D),
// then with A from registers and B N-major (the transpose flag): dV += Pᵀ·dO, dK += dSᵀ·Q; and
// dSᵀ into the step's dS tile (transposed: query rows). After a barrier of every consumer, dQ =
// dS·K of the block (split among the consumers by DqSplit; A K-major from the dS tile, B N-major
// from K) is staged in FP32 and added to the accumulator by TMA reductions (rows past seqlen_q
// skipped by TMA); the convert kernel applies softmax_scale, dK gets it at the end. kBlockM 80
// (head_dim 128; attn_bwd::fa3_dq_transposed: no multiple of the wgmma's 64 rows) computes dQᵀ =
// Kᵀ·dSᵀ instead, consumer c the head_dim rows [64 c, 64 c + 64) for all the step's query rows (A
// M-major from K, B K-major from the dS tile), and stages it transposed in boxes of 80 rows. Two dS
// tiles alternate, so a tile is rewritten only after every consumer's dQ of the step before the
// last (ordered by the barrier of the step in between). Rows past seqlen_q and keys past seqlen_k
// arrive zero-filled (lse_log2 and D of other rows or zeros, masked), so they add nothing. At the
// end dK (times softmax_scale) and dV go through the K and V tiles to TMA stores (keys past
// seqlen_k skipped).
// head_dim 256 (attn_bwd::head_dim_parts; kBlockN 64): consumers 0 and 1 both own the block's 64
// keys, consumer c holding dK and dV of columns [128 c, 128 c + 128) (there are not the registers
// to hold 64 keys x 256 columns of dK and dV in one) and computing Sᵀ and dPᵀ of the step's query
// rows [kBlockM / 2 · c, kBlockM / 2 · (c + 1)) over the whole head_dim, so no product is computed
// twice. Each stores its Pᵀ and dSᵀ transposed into its half of the step's P and dS tiles; after a
// barrier of both, dV += Pᵀ·dO and dK += dSᵀ·Q take A from those tiles (M-major through the
// transpose flag). A tile is rewritten once both consumers' products of the step before are
// complete (a barrier before the stores). Two stages of 64 x 256 Q and dO leave no room for a dQ
// staging of its own (kDqInStage, derived from head_dim): a consumer computes its part of dQ in
// passes of 64 columns and stages each in FP32 over its own column slabs of the step's Q and dO
// tiles (64 KB in all, as dQ's 64 x 256 FP32) once its own products are complete (the other
// consumer's Sᵀ and dPᵀ, which read every column, are: the barrier after the stores); the stage
// goes back to the producer once the TMA reductions have read it, waited for under the next step's
// products.
// kDeterministic: CTAs take their (n_block, head, batch) from a ticket counter in start order,
// and a consumer adds its dQ of query block m only after every consumer of the key blocks before
// it did (a semaphore per (batch, query head, query block) counting consumer additions: it
// waits for kConsumers · n_block, adds, waits for its reductions to complete, then counts), so
// each element is summed in key-block order: bitwise reproducible; a CTA waits only on CTAs that
// started before it, so it cannot deadlock.
// Launch: grid (⌈seqlen_k / kBlockN⌉, heads_kv, batch), or kDeterministic the same count along x;
// 128 (fa3_bwd::consumers(kHeadDim, kBlockN) + 1) threads; AttentionBwdSm90Layout(...).launch_bytes
// of dynamic shared memory; the maps of AttentionBwdSm90Params; after attention_bwd_preprocess on
// the same stream.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, int kStages, bool kCausal,
          bool kDeterministic>
__global__ void __launch_bounds__(128 * (fa3_bwd::consumers(kHeadDim, kBlockN) + 1), 1)
    attention_bwd_sm90(const __grid_constant__ AttentionBwdSm90Params params) {
  static_assert(DTypeTraits<T>::kIsMmaOperand && sizeof(T) == 2, "T must be kt::bf16 or kt::fp16");
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256,
                "kHeadDim must be 64, 128 or 256");
  static_assert(kBlockM == 64 || kBlockM == 80 || kBlockM == 128, "kBlockM must be 64, 80 or 128");
  static_assert(kBlockN == 64 || kBlockN == 128, "one or two groups of 64 keys");
  static_assert(kStages >= 2 && kStages <= 4, "2 to 4 Q/dO stages");
  constexpr int kParts = attn_bwd::head_dim_parts(kHeadDim);
  constexpr int kCols = kHeadDim / kParts;  // dK and dV columns a consumer holds
  static_assert(kParts == 1 || kBlockN == 64, "head_dim parts share one group of 64 keys");
  // The shared memory then holds no dQ staging of its own (AttentionBwdSm90Layout).
  constexpr bool kDqInStage = attn_bwd::fa3_dq_staged_in_stage(kHeadDim);
  static_assert(!kDqInStage || (kBlockM == 64 && kParts == 2),
                "dQ staged in the stage: a consumer's 64 rows x kCols FP32 fill its column slabs "
                "of the Q and dO tiles");
  constexpr int kStepM = attn_bwd::fa3_step_rows(kHeadDim, kBlockM);  // of Sᵀ and dPᵀ
  static_assert(kCols + kStepM <= attn_bwd::kFa3AccumulatorRegisters,
                "a consumer thread keeps dK, dV (its columns in FP32) and Sᵀ, dPᵀ (kStepM) in "
                "registers: at most kFa3AccumulatorRegisters of its kFa3ConsumerRegisters");
  // dQ transposed (block_m 80): the consumers split head_dim in 64-row tiles of dQᵀ.
  constexpr bool kDqTransposed = attn_bwd::fa3_dq_transposed(kBlockM);
  static_assert(!kDqTransposed || (kParts == 1 && kHeadDim == 64 * (kBlockN / 64)),
                "dQ transposed: one 64-row head_dim tile of dQᵀ a consumer");
  constexpr AttentionBwdSm90Layout kSmem(kHeadDim, kBlockM, kBlockN, kStages);
  static_assert(kSmem.launch_bytes <= 227 * 1024,
                "more shared memory than an sm_90 CTA gets (227 KB)");

  const AttentionBwdParams& p = params.bwd;
  if (test_fault(p.dk)) return;

  constexpr int kConsumers = fa3_bwd::consumers(kHeadDim, kBlockN);
  constexpr int kSlabs = kHeadDim / 64;     // 128-byte column slabs of a 16-bit row
  constexpr int kKSteps = kHeadDim / 16;    // k16 steps of Sᵀ and dPᵀ (head_dim)
  constexpr int kQSteps = kBlockM / 16;     // k16 steps of dV and dK (queries)
  constexpr int kStepQSteps = kStepM / 16;  // k16 steps of a consumer's Pᵀ and dSᵀ
  constexpr int kNSteps = kBlockN / 16;     // k16 steps of dQ (keys)
  constexpr int kKvSlabBytes = kBlockN * 128;
  constexpr int kQSlabBytes = kBlockM * 128;
  constexpr int kDsAtomBytes = kBlockM * 128;  // 64 keys of the block's query rows
  // A {32, fa3_dq_box_rows} box of the FP32 dQ accumulator (TMA reductions).
  constexpr int kDqBoxBytes = attn_bwd::fa3_dq_box_rows(kBlockM) * 128;
  using Dq = fa3_bwd::DqSplit<kHeadDim, kBlockM, kConsumers>;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned int raw = shared_address(smem_raw);
  const unsigned int base = (raw + 1023u) & ~1023u;
  const unsigned int kv_full = base + kSmem.barriers;  // K and V landed
  const unsigned int full = kv_full + 8;               // + 8 stage: the stage's rows landed
  const unsigned int empty = full + 8 * kStages;       // + 8 stage: every consumer is done with it
  const unsigned int ticket_word = empty + 8 * kStages;  // kDeterministic: the CTA's ticket
  const unsigned int smem_k = base + kSmem.k;
  const unsigned int smem_v = base + kSmem.v;
  const float* const stats_rows =
      reinterpret_cast<const float*>(smem_raw + (base - raw + kSmem.stats));

  const int seqlen_q = p.seqlen_q;
  const int seqlen_k = p.seqlen_k;
  const int num_m_blocks = (seqlen_q + kBlockM - 1) / kBlockM;

  if (threadIdx.x == 0) {
    mbarrier_init(kv_full, 1);
#pragma unroll 1
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, kConsumers);
    }
    fence_mbarrier_init();
    // Tickets in CTA start order: a CTA waits only for CTAs of smaller tickets, which are running
    // or done.
    if constexpr (kDeterministic) st_shared_4(ticket_word, atomicAdd(p.dq_semaphores, 1u));
  }
  __syncthreads();

  const attn_bwd::CtaWork work = attn_bwd::cta_work<kBlockM, kBlockN, kCausal, kDeterministic>(
      p, kDeterministic ? ld_shared_4(ticket_word) : 0u);
  const int n_block = work.n_block, kv_head = work.kv_head, batch = work.batch;
  const int num_steps = work.num_steps;
  const int n0 = n_block * kBlockN;
  const int diagonal = seqlen_k - seqlen_q;
  // The lse_log2 and D index of query row m0 of query head `head`.
  const auto stats_row = [&](int head, int m0) {
    return (batch * p.heads_q + head) * seqlen_q + m0;
  };

  // Broadcast from lane 0 so ptxas sees it warp-uniform (no divergent wgmma to serialize).
  const int warpgroup = __shfl_sync(0xFFFFFFFFu, int(threadIdx.x / 128), 0);
  if (warpgroup == 0) {
    // Producer: one thread issues every TMA load; the others leave.
    if constexpr (kConsumers > 1) setmaxnreg_dec<fa3_bwd::kProducerRegisters>();
    if (threadIdx.x != 0 || num_steps == 0) return;
    mbarrier_arrive_expect_tx(kv_full, 2 * kSmem.kv_bytes);
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) {
      tma_load_4d(smem_k + slab * kKvSlabBytes, &params.k_map, 64 * slab, n0, kv_head, batch,
                  kv_full);
      tma_load_4d(smem_v + slab * kKvSlabBytes, &params.v_map, 64 * slab, n0, kv_head, batch,
                  kv_full);
    }
    StageRing<kStages> ring;
#pragma unroll 1
    for (int step = 0; step < num_steps; ++step) {
      const int head = work.head(step);
      const int m0 = work.m_block(step) * kBlockM;
      const unsigned int bar = full + 8 * ring.stage;
      const unsigned int q_tile = base + kSmem.q + ring.stage * 2 * kSmem.q_bytes;
      const unsigned int stats = base + kSmem.stats + ring.stage * kSmem.stats_bytes;
      mbarrier_wait(empty + 8 * ring.stage, ring.phase ^ 1);
      mbarrier_arrive_expect_tx(bar, 2 * kSmem.q_bytes + 2 * 4 * kSmem.stats_box);
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        tma_load_4d(q_tile + slab * kQSlabBytes, &params.q_map, 64 * slab, m0, head, batch, bar);
        tma_load_4d(q_tile + kSmem.q_bytes + slab * kQSlabBytes, &params.do_map, 64 * slab, m0,
                    head, batch, bar);
      }
      // The rows' lse_log2 and D, from the 16-byte aligned element at or before the first (a TMA
      // box starts there): those past seqlen_q are other rows' (or zeros past the last row); the
      // consumers mask them.
      const int first = stats_row(head, m0) & ~(AttentionBwdSm90Layout::kStatsLead - 1);
      tma_load_1d(stats, &params.lse_log2_map, first, bar);
      tma_load_1d(stats + 4 * kSmem.stats_rows, &params.d_rows_map, first, bar);
      ring.advance();
    }
    return;
  }

  // Consumers.
  if constexpr (kConsumers > 1) setmaxnreg_inc<attn_bwd::kFa3ConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int thread = threadIdx.x % 128;
  const int warp = thread / 32;
  const int lane = thread % 32;
  // This thread's keys (rows of Sᵀ, dPᵀ, dK, dV) relative to the block: key_row and key_row + 8;
  // its queries (columns) relative to the step's block: query_first + 8 j + query_col + {0, 1};
  // its dK and dV columns: [col_first, col_first + kCols).
  const int key_group = consumer / kParts;
  const int part = consumer % kParts;
  const int col_first = kCols * part;
  const int col_slab = col_first / 64;  // of the 16-bit tiles' 64-column slabs
  const int key_first = fa3_bwd::kKeys * key_group;
  const int query_first = kStepM * part;
  const int key_row = key_first + 16 * warp + lane / 4;
  const int query_col = 2 * (lane % 4);
  const unsigned int k_rows = smem_k + key_first * 128;  // the consumer's keys in each K slab
  const unsigned int v_rows = smem_v + key_first * 128;
  const unsigned int dq_staging = base + kSmem.dq + consumer * Dq::kStagingBytes;
  const int dq_row_tile = Dq::first_row_tile(consumer);
  const int dq_col = Dq::first_col(consumer);
  const float scale_log2 = p.scale_log2;
  // Whether the consumer's keys hold one past seqlen_k (every step masks then).
  const bool keys_cross_end = n0 + key_first + fa3_bwd::kKeys > seqlen_k;

  float dk[1][kCols / 2];
  float dv[1][kCols / 2];
#pragma unroll
  for (int i = 0; i < kCols / 2; ++i) dk[0][i] = dv[0][i] = 0.0f;

  if (num_steps > 0) mbarrier_wait(kv_full, 0);
  StageRing<kStages> ring;
#pragma unroll 1
  for (int step = 0; step < num_steps; ++step) {
    const int head = work.head(step);
    const int m_block = work.m_block(step);
    const int m0 = m_block * kBlockM;
    const unsigned int q_tile = base + kSmem.q + ring.stage * 2 * kSmem.q_bytes;
    const unsigned int do_tile = q_tile + kSmem.q_bytes;
    const int lead = stats_row(head, m0) % AttentionBwdSm90Layout::kStatsLead;
    const float* const lse_rows = stats_rows + ring.stage * (kSmem.stats_bytes / 4) + lead;
    const float* const d_rows = lse_rows + kSmem.stats_rows;
    // Two dS tiles: the step's and the one before (every consumer's dQ of the block), or at
    // head_dim 256 the step's dS and P tiles.
    const unsigned int ds_tile = base + kSmem.ds + (kParts > 1 ? 0 : step & 1) * kSmem.ds_bytes;
    const unsigned int p_tile = base + kSmem.ds + kSmem.ds_bytes;

    mbarrier_wait(full + 8 * ring.stage, ring.phase);

    // Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ for the consumer's keys and query rows: one group each, both
    // operands K-major (head_dim), scale-d 0 on the first k16 step (the accumulators hold nothing
    // of the step before).
    float s[kStepM / 2];
    float dp[kStepM / 2];
    // At head_dim 256 the K and V descriptors (loop-invariant, 16 k16 steps each) are rebuilt
    // each step from an opaque address: hoisted out of the loop they held 64 registers and spilled.
    const auto issue_transposed = [&](float(&acc)[kStepM / 2], unsigned int key_rows,
                                      unsigned int query_tile) {
      if constexpr (kParts > 1) key_rows = opaque(key_rows);
      query_tile += query_first * 128;
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks)
        wgmma_m64k16_ss<T, kStepM, 0>(
            acc, kmajor_descriptor(key_rows + (ks / 4) * kKvSlabBytes + 32 * (ks % 4)),
            kmajor_descriptor(query_tile + (ks / 4) * kQSlabBytes + 32 * (ks % 4)), ks > 0);
      wgmma_commit();
    };
    fence_accumulators(s);
    fence_accumulators(dp);
    wgmma_fence();
    issue_transposed(s, k_rows, q_tile);
    issue_transposed(dp, v_rows, do_tile);
    // kDqInStage (not deterministic): the step before's stage goes back to the producer once its
    // dQ reductions have read it, waited for here, under this step's products.
    if constexpr (kDqInStage && !kDeterministic)
      if (step > 0 && thread == 0) {
        bulk_wait_group_read<0>();
        mbarrier_arrive(empty + 8 * ((ring.stage + kStages - 1) % kStages));
      }

    // Pᵀ in place of Sᵀ while dPᵀ is still on the tensor cores. Masked per element where the
    // consumer's keys cross seqlen_k, the block's rows cross seqlen_q, or (causal) its last key
    // lies right of its first row's diagonal.
    wgmma_wait<1>();
    fence_accumulators(s);
    const bool masked =
        keys_cross_end || m0 + kBlockM > seqlen_q ||
        (kCausal && n0 + key_first + fa3_bwd::kKeys - 1 > m0 + query_first + diagonal);
#pragma unroll
    for (int j = 0; j < kStepM / 8; ++j) {
      // Two scalar loads: `lead` may leave the pair on 4 bytes.
      const int q = query_first + 8 * j + query_col;
      const float lse[2] = {lse_rows[q], lse_rows[q + 1]};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float v = exp2_approx(fmaf(s[4 * j + e], scale_log2, -lse[e & 1]));
        if (masked) {
          const int key = n0 + key_row + 8 * (e >> 1);
          const int query = m0 + q + (e & 1);
          const bool visible =
              key < seqlen_k && query < seqlen_q && (!kCausal || key <= query + diagonal);
          v = visible ? v : 0.0f;
        }
        s[4 * j + e] = v;
      }
    }
    unsigned int pa[kStepQSteps][4];
    pack_a_operand<T>(pa, s);

    // dSᵀ = Pᵀ ∘ (dPᵀ - D) in place of dPᵀ, into the dS tile transposed.
    wgmma_wait<0>();
    fence_accumulators(dp);
#pragma unroll
    for (int j = 0; j < kStepM / 8; ++j) {
      const int q = query_first + 8 * j + query_col;
      const float d[2] = {d_rows[q], d_rows[q + 1]};
#pragma unroll
      for (int e = 0; e < 4; ++e) dp[4 * j + e] = s[4 * j + e] * (dp[4 * j + e] - d[e & 1]);
    }
    unsigned int dsa[kStepQSteps][4];
    pack_a_operand<T>(dsa, dp);

    if constexpr (kParts == 1) {
      fa3_bwd::store_ds_transposed(ds_tile + key_group * kDsAtomBytes, dsa, warp, lane);
      // dV += Pᵀ·dO and dK += dSᵀ·Q: A from registers (keys x queries), B the step's dO and Q
      // (queries x the consumer's head_dim columns, N-major through the transpose flag).
      wgmma_fence();
#pragma unroll
      for (int t = 0; t < kQSteps; ++t)
        wgmma_m64k16_rs<T, kCols, 1>(
            dv[0], pa[t],
            mnmajor_descriptor(do_tile + col_slab * kQSlabBytes + 2048 * t, kQSlabBytes), 1);
#pragma unroll
      for (int t = 0; t < kQSteps; ++t)
        wgmma_m64k16_rs<T, kCols, 1>(
            dk[0], dsa[t],
            mnmajor_descriptor(q_tile + col_slab * kQSlabBytes + 2048 * t, kQSlabBytes), 1);
      wgmma_commit();
      // Every consumer's dS is in the tile (its stores made visible to wgmma's async proxy
      // first), and this consumer's reductions of the step before have read their staging.
      fence_proxy_async_shared();
      if (thread == 0) bulk_wait_group_read<0>();
      named_barrier_sync(fa3_bwd::kAllConsumers, 128 * kConsumers);
    } else {
      // Both consumers' products of the step before (dV, dK, dQ) have read the tiles.
      named_barrier_sync(fa3_bwd::kAllConsumers, 128 * kConsumers);
      fa3_bwd::store_ds_transposed(p_tile + query_first * 128, pa, warp, lane);
      fa3_bwd::store_ds_transposed(ds_tile + query_first * 128, dsa, warp, lane);
      fence_proxy_async_shared();
      named_barrier_sync(fa3_bwd::kAllConsumers, 128 * kConsumers);
      // dV += Pᵀ·dO and dK += dSᵀ·Q over all the step's query rows: A from the P and dS tiles
      // (keys x queries, M-major), B the step's dO and Q as above.
      wgmma_fence();
#pragma unroll
      for (int t = 0; t < kQSteps; ++t)
        wgmma_m64k16_ss<T, kCols, 1, 1>(
            dv[0], mnmajor_descriptor(p_tile + 2048 * t, kDsAtomBytes),
            mnmajor_descriptor(do_tile + col_slab * kQSlabBytes + 2048 * t, kQSlabBytes), 1);
#pragma unroll
      for (int t = 0; t < kQSteps; ++t)
        wgmma_m64k16_ss<T, kCols, 1, 1>(
            dk[0], mnmajor_descriptor(ds_tile + 2048 * t, kDsAtomBytes),
            mnmajor_descriptor(q_tile + col_slab * kQSlabBytes + 2048 * t, kQSlabBytes), 1);
      wgmma_commit();
    }

    // Once the step's wgmma groups are complete: the A registers and accumulators fenced, and
    // (`arrive`) the step's Q, dO, lse_log2 and D, no longer read by this consumer, given back.
    const auto release_stage = [&](bool arrive) {
      fence_accumulators(dv[0]);
      fence_accumulators(dk[0]);
#pragma unroll
      for (int t = 0; t < kStepQSteps; ++t) {
        fence_operands(pa[t]);
        fence_operands(dsa[t]);
      }
      if (arrive && thread == 0) mbarrier_arrive(empty + 8 * ring.stage);
    };
    // The dQ semaphore of (batch, head, m_block): fewer than batch · heads_q · seqlen_q words.
    unsigned int* const semaphore =
        kDeterministic ? p.dq_semaphores + 1 + (batch * p.heads_q + head) * num_m_blocks + m_block
                       : nullptr;
    // kDeterministic, thread 0: before this consumer's first reduction of the step, every
    // consumer of the key blocks before this one has added its part; after its last, the
    // reductions complete (not only read) before they count, since the next key block's follow.
    const auto await_turn = [&] {
      if constexpr (kDeterministic) {
        while (ld_acquire_gpu(semaphore) < unsigned(kConsumers * n_block)) nanosleep_ns(64);
        fence_proxy_async_global();
      }
    };
    const auto count_turn = [&] {
      if constexpr (kDeterministic) {
        bulk_wait_group_all();
        fence_proxy_async_global();
        atom_add_acq_rel_gpu(semaphore, 1u);
      }
    };

    if constexpr (kDqTransposed) {
      // dQᵀ = Kᵀ·dSᵀ: this consumer's head_dim columns of dQ for all the step's query rows,
      // staged transposed in FP32 and added to the accumulator.
      float dqt[kBlockM / 2];
      fa3_bwd::issue_dq_transposed<T, kBlockM, kNSteps>(dqt, smem_k + (dq_col / 64) * kKvSlabBytes,
                                                        kKvSlabBytes, ds_tile, kDsAtomBytes);
      wgmma_wait<0>();
      fence_accumulators(dqt);
      release_stage(true);
      fa3_bwd::stage_dq_transposed<kBlockM>(dq_staging, dqt, warp, lane);
      fence_proxy_async_shared();
      named_barrier_sync(1 + consumer, 128);
      if (thread == 0) {
        await_turn();
#pragma unroll
        for (int box = 0; box < Dq::kCols / 32; ++box)
          tma_reduce_add_4d(&params.dq_accum_map, dq_staging + box * kDqBoxBytes, dq_col + 32 * box,
                            m0, head, batch);
        bulk_commit_group();
        count_turn();
      }
    } else if constexpr (!kDqInStage) {
      // dQ = dS·K: this consumer's row tiles and columns.
      float dq[Dq::kRowTiles][Dq::kCols / 2];
      fa3_bwd::issue_dq<T, Dq::kRowTiles, Dq::kCols / 2, kNSteps>(
          dq, ds_tile, dq_row_tile, kDsAtomBytes, smem_k + (dq_col / 64) * kKvSlabBytes,
          kKvSlabBytes);
      wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < Dq::kRowTiles; ++i) fence_accumulators(dq[i]);
      release_stage(true);

      // dQ staged in FP32 (128B-swizzled {32, 64} boxes) and added to the accumulator.
#pragma unroll
      for (int slab = 0; slab < Dq::kCols / 32; ++slab)
        sm90::stage_slab<float>(dq_staging + slab * Dq::kRowTiles * kDqBoxBytes, dq, slab, warp,
                                lane);
      fence_proxy_async_shared();
      named_barrier_sync(1 + consumer, 128);
      if (thread == 0) {
        await_turn();
#pragma unroll
        for (int slab = 0; slab < Dq::kCols / 32; ++slab)
#pragma unroll
          for (int i = 0; i < Dq::kRowTiles; ++i)
            tma_reduce_add_4d(&params.dq_accum_map,
                              dq_staging + (slab * Dq::kRowTiles + i) * kDqBoxBytes,
                              dq_col + 32 * slab, m0 + 64 * (dq_row_tile + i), head, batch);
        bulk_commit_group();
        count_turn();
      }
    } else {
      // dQ = dS·K of this consumer's columns in passes of kDqPassColumns, each staged in FP32
      // (128B-swizzled {32, 64} boxes) over this consumer's column slabs of the step's Q and dO
      // tiles, box b (columns dq_col + 32 b) in Q's slab col_slab + b for b < 2, else dO's
      // col_slab + b - 2, and added to the accumulator by TMA reductions.
      const auto staging_box = [&](int box) {
        return (box < 2 ? q_tile : do_tile) + (col_slab + box % 2) * kQSlabBytes;
      };
      constexpr int kPassBoxes = fa3_bwd::kDqPassColumns / 32;
#pragma unroll
      for (int pass = 0; pass < Dq::kCols / fa3_bwd::kDqPassColumns; ++pass) {
        float dq[1][fa3_bwd::kDqPassColumns / 2];
        fa3_bwd::issue_dq<T, 1, fa3_bwd::kDqPassColumns / 2, kNSteps>(
            dq, ds_tile, dq_row_tile, kDsAtomBytes, smem_k + (dq_col / 64 + pass) * kKvSlabBytes,
            kKvSlabBytes);
        wgmma_wait<0>();
        fence_accumulators(dq[0]);
        // This consumer's products of the step are complete (the wait), and the other's Sᵀ and
        // dPᵀ, the other readers of these slabs, were before it stored its Pᵀ and dSᵀ.
#pragma unroll
        for (int box = 0; box < kPassBoxes; ++box)
          sm90::stage_slab<float>(staging_box(kPassBoxes * pass + box), dq, box, warp, lane);
        fence_proxy_async_shared();
        named_barrier_sync(1 + consumer, 128);
        if (thread == 0) {
          if (pass == 0) await_turn();
#pragma unroll
          for (int box = 0; box < kPassBoxes; ++box)
            tma_reduce_add_4d(&params.dq_accum_map, staging_box(kPassBoxes * pass + box),
                              dq_col + fa3_bwd::kDqPassColumns * pass + 32 * box,
                              m0 + 64 * dq_row_tile, head, batch);
          bulk_commit_group();
        }
      }
      // Deterministic: the stage goes back to the producer once the reductions have counted;
      // otherwise under the next step's products (above).
      if (thread == 0) count_turn();
      release_stage(kDeterministic);
    }
    ring.advance();
  }

  // dK (times softmax_scale) and dV of the consumer's keys and columns, in T, through its rows and
  // slabs of the K and V tiles (every consumer's last Sᵀ, dPᵀ and dQ have read them: the barrier)
  // to TMA stores, keys past seqlen_k skipped.
  named_barrier_sync(fa3_bwd::kAllConsumers, 128 * kConsumers);
  const float scale = p.softmax_scale;
#pragma unroll
  for (int i = 0; i < kCols / 2; ++i) dk[0][i] *= scale;
#pragma unroll
  for (int slab = 0; slab < kCols / 64; ++slab) {
    sm90::stage_slab<T>(k_rows + (col_slab + slab) * kKvSlabBytes, dk, slab, warp, lane);
    sm90::stage_slab<T>(v_rows + (col_slab + slab) * kKvSlabBytes, dv, slab, warp, lane);
  }
  fence_proxy_async_shared();
  named_barrier_sync(1 + consumer, 128);
  if (thread == 0) {
#pragma unroll
    for (int i = 0; i < kCols / 64; ++i) {
      const int slab = col_slab + i;
      tma_store_4d(&params.dk_map, k_rows + slab * kKvSlabBytes, 64 * slab, n0 + key_first, kv_head,
                   batch);
      tma_store_4d(&params.dv_map, v_rows + slab * kKvSlabBytes, 64 * slab, n0 + key_first, kv_head,
                   batch);
    }
    bulk_commit_group();
    // Shared memory must outlive the stores' (and the last reductions') reads.
    bulk_wait_group_read<0>();
  }
}

}  // namespace kt
