// The sm_90a FlashAttention forward (the "fa3" family): O = softmax(scale · Q·Kᵀ) · V per
// (batch, head) on wgmma, warp-specialized. A producer warpgroup loads the CTA's Q once and streams
// K/V blocks by TMA (4D tensor maps over any strided layout) into kStages rings of 128B-swizzled
// shared memory guarded by full/empty mbarriers (K's slot frees after S, V's after P·V); each
// consumer warpgroup owns 64 query rows, takes S = Q·Kᵀ with both operands in shared memory, runs
// the online softmax in FP32 registers and feeds P from registers straight into O += P·V (V read
// N-major through the transpose flag). S of block j is computed while P·V of block j - 1 is still
// on the tensor cores. With ping-pong the consumers take turns issuing their GEMMs (named barriers
// pass the turn round), so one warpgroup's softmax runs while the others' GEMMs hold the tensor
// cores. O is staged in the warpgroup's Q buffer and written by TMA stores; the row logsumexp
// optionally. With split-KV, num_splits CTAs share a query block, each over its own range of key
// blocks, and write FP32 partial outputs with their logsumexp for attention_split_combine.cuh.
// Instantiated by NVRTC name expressions (kt::attention_fwd_sm90<...>); sm_90a only.
#pragma once

#include "kerntune/attention/attention_params.h"
#include "kerntune/attention/attention_sequence.cuh"
#include "kerntune/attention/attention_trace.cuh"
#include "kerntune/attention/softmax_rows.cuh"
#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/common/stage_ring.cuh"
#include "kerntune/common/test_fault.cuh"
#include "kerntune/common/wgmma_slab.cuh"
#include "kerntune/common/work_order.h"

namespace kt {
namespace fa3 {

constexpr int kRows = 64;            // query rows per consumer warpgroup: one m64 wgmma
constexpr int kBoxBytes = 64 * 128;  // a {64 columns, 64 rows} TMA box of Q or O
// Named barriers: 1 + c guards consumer c's O staging, kTurnBarrier + c its ping-pong turn.
constexpr int kTurnBarrier = 4;

// A CTA's threads: with one consumer, warpgroup 0 consumes and one warp (warp 4) produces, so a
// CTA of few registers leaves room for another on its SM; with two or three, warpgroup 0 is the
// producer, whose registers setmaxnreg moves to the consumers.
__host__ __device__ constexpr int cta_threads(int consumers) {
  return consumers == 1 ? 160 : 128 * (consumers + 1);
}

// Register split (setmaxnreg) of a CTA launched with 65536 / threads registers per thread:
// two consumers 40 + 2 x 232 = 3 x 168, three 32 + 3 x 160 = 4 x 128. One consumer keeps the
// registers as compiled (beside a one-warp producer, d64 with 64-key blocks fits three CTAs an
// SM that way).
template <int kConsumers>
struct RegisterSplit {
  static constexpr int kProducer = kConsumers == 3 ? 32 : 40;
  static constexpr int kConsumer = kConsumers == 3 ? 160 : 232;
  static constexpr int kLaunchRegs = 65536 / (128 * (kConsumers + 1)) / 8 * 8;
  static_assert(kConsumers == 1 ||
                    kProducer + kConsumers * kConsumer <= (kConsumers + 1) * kLaunchRegs,
                "the split exceeds the registers the CTA is launched with");
};

// Query rows [row_begin, row_begin + rows) see keys [0, key_end): bottom-right causal alignment
// (key j visible to query i iff j <= i + seqlen_k - seqlen_q), so the last row decides. Returns
// the number of kBlockN key blocks they visit (0 when no row exists or none sees a key).
template <int kBlockN, bool kCausal>
__device__ __forceinline__ int visited_blocks(int row_begin, int rows, const attn::Sequence& s) {
  if (rows <= 0) return 0;
  int key_end = s.seqlen_k;
  if constexpr (kCausal) {
    const int last_row_end = row_begin + rows + s.seqlen_k - s.seqlen_q;
    key_end = last_row_end < key_end ? last_row_end : key_end;
  }
  return key_end > 0 ? (key_end + kBlockN - 1) / kBlockN : 0;
}

// Split `split` of `splits` of a CTA's `blocks` key blocks: [first, end), floor(blocks / splits)
// or one more each, so that no split is empty while there are as many blocks as splits and the
// splits of a persistent grid's items sum evenly (core/attention_config's model counts the same).
struct KeyRange {
  int first, end;
};
__device__ __forceinline__ KeyRange split_range(int blocks, int split, int splits) {
  return {blocks * split / splits, blocks * (split + 1) / splits};
}

// O rows [row0, row0 + 8] of a consumer thread straight from its accumulators (normalized) to
// global memory, rows past seqlen_q left out: for a packed batch's last box of a sequence, which a
// TMA store would write past the sequence's end into the next one's rows.
template <typename T, int kOAccs>
__device__ __forceinline__ void store_rows_direct(const AttentionParams& p, T* o_head, int row0,
                                                  int seqlen_q, const float (&o)[kOAccs],
                                                  int lane) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    if (row >= seqlen_q) continue;
    T* out = o_head + row * p.o_stride.row + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < kOAccs / 4; ++j)
      store_two<T>(out + 8 * j, o[4 * j + 2 * h], o[4 * j + 2 * h + 1]);
  }
}

// Split-KV: one row's partial output (normalized by the split's own row sum) and logsumexp, in
// the layout of AttentionParams::partials; `row` is the row's index over batch · heads · seqlen_q.
template <int kOAccs>
__device__ __forceinline__ void store_partial_row(const AttentionParams& p, int split,
                                                  long long row, const float (&o)[kOAccs], int h,
                                                  int lane, float lse) {
  constexpr int kHeadDim = 2 * kOAccs;
  const long long rows = static_cast<long long>(p.batch) * p.heads_q * p.seqlen_q;
  float* out = p.partials + (split * rows + row) * kHeadDim + 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < kOAccs / 4; ++j) {
    struct alignas(8) Pair {
      float lo, hi;
    };
    *reinterpret_cast<Pair*>(out + 8 * j) = Pair{o[4 * j + 2 * h], o[4 * j + 2 * h + 1]};
  }
  if (lane % 4 == 0) p.partials[p.num_splits * rows * kHeadDim + split * rows + row] = lse;
}

// A query block a CTA works: its first row, query head, batch entry and (split-KV) split.
struct Tile {
  int m0, head, batch, split;
};

// The tile of a CTA's `turn`-th turn; false past its last. The tiles of a launch are the items
// of sectioned_slot's order (common/work_order.h) over the query blocks of each (head, batch)
// entry: full masks query blocks fastest (sections of 1); causal the longest query block first
// within sections of p.causal_section entries, so the CTAs that see every key block of the last
// heads do not start last. Without kPersistent a CTA works one: the item at its linear blockIdx
// over the grid (x: query blocks; y: heads; z: batch). With kPersistent the grid is at most one
// CTA per item, and each CTA works the items at the indices snake_index gives it; with split-KV
// an item is one split of a tile, the splits of a tile consecutive, so a CTA streams key ranges
// of several heads through one pipeline and the grid's CTAs sum to within a split of each other.
// Split-KV without kPersistent keeps its blockIdx (x: query block times num_splits, the split
// fastest; causal, query blocks in reverse order of x). p.seqlen_q is a packed batch's longest
// sequence: tiles past a shorter one's rows are the caller's to skip.
template <int kBlockM, bool kCausal, bool kSplitKv, bool kPersistent>
__device__ __forceinline__ bool cta_tile(const AttentionParams& p, int turn, Tile& t) {
  if constexpr (kSplitKv && !kPersistent) {
    if (turn > 0) return false;
    const int splits = p.num_splits;
    const int m_block = int(blockIdx.x) / splits;
    const int m_blocks = int(gridDim.x) / splits;
    t = {(kCausal ? m_blocks - 1 - m_block : m_block) * kBlockM, int(blockIdx.y), int(blockIdx.z),
         int(blockIdx.x) % splits};
    return true;
  } else {
    if (!kPersistent && turn > 0) return false;
    const int splits = kSplitKv ? p.num_splits : 1;
    const int m_blocks = kPersistent ? (p.seqlen_q + kBlockM - 1) / kBlockM : int(gridDim.x);
    const int heads = kPersistent ? p.heads_q : int(gridDim.y);
    const int entries = heads * (kPersistent ? p.batch : int(gridDim.z));
    const int index = kPersistent
                          ? snake_index(turn, int(blockIdx.x), int(gridDim.x))
                          : int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
    if (index >= m_blocks * entries * splits) return false;
    const WorkSlot slot =
        sectioned_slot(index / splits, m_blocks, entries, kCausal ? p.causal_section : 1);
    t = {(kCausal ? m_blocks - 1 - slot.block : slot.block) * kBlockM, slot.entry % heads,
         slot.entry / heads, index % splits};
    return true;
  }
}

}  // namespace fa3

// Ping-pong (kPingPong, two or three consumers): consumer c waits for its turn (barrier
// kTurnBarrier + c), issues its wgmma groups, and passes the turn to c + 1; the last consumer
// opens each tile's first turn and does not pass its last, so every barrier completes as often as
// it is waited on. Every consumer then visits all of the tile's key blocks (the turns must pair
// up); the blocks right of its own diagonal are masked whole. A consumer with no rows (all past
// seqlen_q) takes the same turns empty, issuing nothing, so the others' GEMMs have the tensor
// cores to themselves.
//
// Split-KV (kSplitKv): blockIdx.x = query block · num_splits + split, and the CTA visits only its
// split's range of the query block's key blocks (fa3::split_range); it writes partials, never O.
//
// Persistent (kPersistent): each CTA works a sequence of tiles, or with split-KV of splits of
// tiles (fa3::cta_tile), through the same stage rings and two Q buffers taken in turn, so a tile's
// Q loads while the tile before computes: a buffer is refilled (the q_empty barrier) once every
// consumer has started the next tile and its O store, staged in the buffer as without
// persistence, has read it.
//
// Launch: grid (ceil(seqlen_q / kBlockM) · num_splits, heads_q, batch), or with kPersistent
// (any count up to tiles · num_splits, 1, 1; the host's persistent_grid, at most the CTAs the GPU
// holds at once); fa3::cta_threads(kBlockM / 64)
// threads; 2048 + kBlockM·kHeadDim·2 (twice with kPersistent) + kStages·2·kBlockN·kHeadDim·2 bytes
// of dynamic shared memory; params.q_map/o_map boxes {64, 64}, k_map/v_map {64, kBlockN}
// (attention_params.h). K/V blocks are visited from the last one down, so the blocks that need a
// per-element mask come first and set the running max early (later blocks rarely raise it, and O
// is rescaled only when a row's max rises).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, int kStages, bool kPingPong,
          bool kSplitKv, bool kCausal, bool kWriteLse, bool kPersistent>
__global__ void __launch_bounds__(fa3::cta_threads(kBlockM / 64), 1)
    attention_fwd_sm90(const __grid_constant__ AttentionSm90Params params) {
  static_assert(DTypeTraits<T>::kIsMmaOperand && sizeof(T) == 2, "T must be kt::bf16 or kt::fp16");
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256,
                "kHeadDim must be 64, 128 or 256");
  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 192,
                "one to three consumer warpgroups of 64 rows");
  static_assert(kBlockN == 64 || kBlockN == 80 || kBlockN == 128, "kBlockN must be 64, 80 or 128");
  static_assert(!kPingPong || kBlockM > 64, "ping-pong needs two consumers at least");
  // S of block j needs K_j while P·V of block j - 1 still reads V_{j-1}: two stages at least.
  static_assert(kStages >= 2 && kStages <= 4, "2 to 4 K/V stages");
  constexpr int kQBytes = kBlockM * kHeadDim * 2;  // the CTA's Q (and O) tile
  constexpr int kQBuffers = kPersistent ? 2 : 1;
  static_assert(2048 + kQBuffers * kQBytes + kStages * 4 * kBlockN * kHeadDim <= 227 * 1024,
                "more shared memory than an sm_90 CTA gets (227 KB)");

  const AttentionParams& p = params.attn;
  if (test_fault(p.o)) return;
  if (threadIdx.x == 0) fa3::trace_entry(p);

  constexpr int kConsumers = kBlockM / fa3::kRows;
  constexpr int kSlabs = kHeadDim / 64;   // 128-byte column slabs of a row
  constexpr int kKSteps = kHeadDim / 16;  // k16 steps of Q·Kᵀ
  constexpr int kPSteps = kBlockN / 16;   // k16 steps of P·V
  constexpr int kSAccs = kBlockN / 2;     // FP32 scores per thread
  constexpr int kOAccs = kHeadDim / 2;    // FP32 outputs per thread
  constexpr int kKvSlabBytes = kBlockN * 128;
  constexpr int kKvBytes = kSlabs * kKvSlabBytes;  // one K or V block
  using Regs = fa3::RegisterSplit<kConsumers>;

  // [barriers (1 KB)] [Q: kQBuffers x kConsumers x kSlabs boxes] [K stages] [V stages], 1024-byte
  // aligned for the 128B swizzle (the host adds the slack).
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned int bars = (shared_address(smem_raw) + 1023u) & ~1023u;
  const unsigned int q_full = bars;                    // + 8 buffer: Q landed
  const unsigned int q_empty = bars + 16;              // + 8 buffer: O's stores have read it
  const unsigned int k_full = bars + 32;               // + 8 stage: K landed
  const unsigned int v_full = k_full + 8 * kStages;    // V landed
  const unsigned int k_empty = v_full + 8 * kStages;   // every consumer's S is done with K
  const unsigned int v_empty = k_empty + 8 * kStages;  // every consumer's P·V is done with V
  const unsigned int smem_q = bars + 1024;
  const unsigned int smem_k = smem_q + kQBuffers * kQBytes;
  const unsigned int smem_v = smem_k + kStages * kKvBytes;

  // What a tile visits: its sequence (packed batches: its rows start at seq.q_begin / k_begin of
  // maps with one batch entry) and its key blocks [first_block, end_block), visited from the last
  // one down. None when the tile starts past its sequence's rows (the grid or the tile order fits
  // a packed batch's longest sequence).
  struct TileWork {
    attn::Sequence seq;
    int map_batch, kv_head, first_block, end_block;
  };
  const auto tile_work = [&](const fa3::Tile& t, TileWork& w) {
    w.seq = attn::sequence_of(p, t.batch);
    if (t.m0 >= w.seq.seqlen_q) return false;
    w.map_batch = p.cu_seqlens_q == nullptr ? t.batch : 0;
    w.kv_head = t.head / (p.heads_q / p.heads_kv);
    const fa3::KeyRange range = fa3::split_range(
        fa3::visited_blocks<kBlockN, kCausal>(t.m0, min(w.seq.seqlen_q - t.m0, kBlockM), w.seq),
        t.split, kSplitKv ? p.num_splits : 1);
    w.first_block = range.first;
    w.end_block = range.end;
    return true;
  };
  const auto next_tile = [&](int turn, fa3::Tile& t) {
    return fa3::cta_tile<kBlockM, kCausal, kSplitKv, kPersistent>(p, turn, t);
  };

  // Without kPersistent the CTA's one tile, or nothing to do.
  fa3::Tile only_tile;
  TileWork only_work;
  if constexpr (!kPersistent)
    if (!next_tile(0, only_tile) || !tile_work(only_tile, only_work)) return;

  if (threadIdx.x == 0) {
#pragma unroll
    for (int b = 0; b < kQBuffers; ++b) {
      mbarrier_init(q_full + 8 * b, 1);
      mbarrier_init(q_empty + 8 * b, kConsumers);
    }
#pragma unroll 1
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(k_full + 8 * s, 1);
      mbarrier_init(v_full + 8 * s, 1);
      mbarrier_init(k_empty + 8 * s, kConsumers);
      mbarrier_init(v_empty + 8 * s, kConsumers);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  // Broadcast from lane 0 so ptxas sees it warp-uniform: the branches on it (and on the consumer's
  // rows) then hold no divergent wgmma, which it would serialize (C7520).
  const int warpgroup = __shfl_sync(0xFFFFFFFFu, int(threadIdx.x / 128), 0);
  constexpr int kProducerWarpgroup = kConsumers == 1 ? 1 : 0;  // fa3::cta_threads
  if (warpgroup == kProducerWarpgroup) {
    // Producer: one thread issues every TMA load; the others leave.
    if constexpr (kConsumers > 1) setmaxnreg_dec<Regs::kProducer>();
    if (threadIdx.x % 128 != 0) return;
    // Block b's K and V share stage b's slot in two rings whose slots free separately: K's once
    // every S of the block is done, V's once every P·V is. K runs one block ahead of V, so K of
    // block j + 1 lands while P·V of block j - 1 still holds V's slot.
    StageRing<kStages> k_ring, v_ring;
    const auto load = [&](const void* map, unsigned int tiles, unsigned int full,
                          unsigned int empty, StageRing<kStages>& ring, int block,
                          const TileWork& w) {
      mbarrier_wait(empty + 8 * ring.stage, ring.phase ^ 1);
      mbarrier_arrive_expect_tx(full + 8 * ring.stage, kKvBytes);
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab)
        tma_load_4d(tiles + ring.stage * kKvBytes + slab * kKvSlabBytes, map, 64 * slab,
                    w.seq.k_begin + block * kBlockN, w.kv_head, w.map_batch, full + 8 * ring.stage);
      ring.advance();
    };
    // The loads of tile `t` (with kPersistent into the Q buffer the ring gives, once its last
    // tile's O stores have read it).
    StageRing<kQBuffers> q_ring;
    const auto produce = [&](const fa3::Tile& t, const TileWork& w) {
      const int first_block = w.first_block, end_block = w.end_block;
      const unsigned int q_bar = q_full + 8 * q_ring.stage;
      const unsigned int q_tiles = smem_q + q_ring.stage * kQBytes;
      if constexpr (kPersistent) mbarrier_wait(q_empty + 8 * q_ring.stage, q_ring.phase ^ 1);
      mbarrier_arrive_expect_tx(q_bar, kQBytes);
#pragma unroll
      for (int c = 0; c < kConsumers; ++c)
#pragma unroll
        for (int slab = 0; slab < kSlabs; ++slab)
          tma_load_4d(q_tiles + (c * kSlabs + slab) * fa3::kBoxBytes, &params.q_map, 64 * slab,
                      w.seq.q_begin + t.m0 + fa3::kRows * c, t.head, w.map_batch, q_bar);
      q_ring.advance();
      if (end_block > first_block)
        load(&params.k_map, smem_k, k_full, k_empty, k_ring, end_block - 1, w);
      for (int block = end_block - 1; block >= first_block; --block) {
        if (block > first_block) load(&params.k_map, smem_k, k_full, k_empty, k_ring, block - 1, w);
        load(&params.v_map, smem_v, v_full, v_empty, v_ring, block, w);
      }
    };
    if constexpr (kPersistent) {
      fa3::Tile t;
      TileWork w;
#pragma unroll 1
      for (int turn = 0; next_tile(turn, t); ++turn)
        if (tile_work(t, w)) produce(t, w);
    } else {
      produce(only_tile, only_work);
    }
    return;
  }

  // Consumers.
  if constexpr (kConsumers > 1) setmaxnreg_inc<Regs::kConsumer>();
  const int consumer = kConsumers == 1 ? 0 : warpgroup - 1;
  const int thread = threadIdx.x % 128;
  const int warp = thread / 32;
  const int lane = thread % 32;
  const float scale_log2 = p.scale_log2;

  StageRing<kStages> ring;
  StageRing<kQBuffers> q_ring;
  // kPersistent, once this warpgroup has started a tile after its first: when the tile before's O
  // stores have read that tile's Q buffer (mostly long since), the producer may refill it. Called
  // under the tile's first S, so a wait for the reads leaves the tensor cores busy.
  const auto release_last_q = [&](bool after_first) {
    if constexpr (kPersistent)
      if (after_first && thread == 0) {
        bulk_wait_group_read<0>();
        mbarrier_arrive(q_empty + 8 * (1 - q_ring.stage));
      }
  };
  // Tile `t`, from its Q's arrival (in the buffer q_ring gives) to its O's store; `after_first`:
  // the CTA worked a tile before.
  const auto consume = [&](const fa3::Tile& t, const TileWork& w, bool after_first) {
    // This warpgroup's Q boxes, where its O is staged too.
    const unsigned int q_tile =
        smem_q + q_ring.stage * kQBytes + consumer * kSlabs * fa3::kBoxBytes;
    const attn::Sequence& seq = w.seq;
    const int head = t.head, batch = t.batch;
    const int first_block = w.first_block, end_block = w.end_block;
    const int row_begin = t.m0 + fa3::kRows * consumer;  // this warpgroup's first query row
    const int row0 = row_begin + 16 * warp + lane / 4;   // this thread's rows: row0, row0 + 8
    const int diagonal = seq.seqlen_k - seq.seqlen_q;
    // This warpgroup's blocks are [first_block, my_end): those right of its last visible key
    // (causal, or rows past seqlen_q) are skipped. With ping-pong, whose turns pair up, only a
    // warpgroup with no rows (past seqlen_q: a tile's last warpgroups) skips, all of them.
    const bool idle = row_begin >= seq.seqlen_q;
    // kerntune trace (-DKT_TRACE): consumer 0's first thread stamps the CTA's first tile.
    const bool marks = !after_first && consumer == 0 && thread == 0;
    const int my_end =
        kPingPong && !idle
            ? end_block
            : max(first_block,
                  min(end_block, fa3::visited_blocks<kBlockN, kCausal>(
                                     row_begin, min(seq.seqlen_q - row_begin, fa3::kRows), seq)));

    // Ping-pong turns (see above); without ping-pong these are empty. The last consumer opens a
    // tile's first turn.
    auto open_turns = [&]() {
      if constexpr (kPingPong)
        if (consumer == kConsumers - 1) named_barrier_arrive(fa3::kTurnBarrier, 128 * 2);
    };
    auto begin_turn = [&]() {
      if constexpr (kPingPong) named_barrier_sync(fa3::kTurnBarrier + consumer, 128 * 2);
    };
    auto end_turn = [&](bool last) {
      if constexpr (kPingPong)
        if (!last || consumer != kConsumers - 1)
          named_barrier_arrive(fa3::kTurnBarrier + (consumer + 1) % kConsumers, 128 * 2);
    };

    // Skipped blocks: released as they land, in order, so the empty barriers count one arrival
    // per phase. An idle warpgroup under ping-pong takes the turns the others do, empty: a turn a
    // block (after the first turn's start, below) and the last P·V's.
    const bool empty_turns = kPingPong && idle && end_block > first_block;
    if (empty_turns) open_turns();
#pragma unroll 1
    for (int i = my_end; i < end_block; ++i) {
      if (empty_turns) {
        begin_turn();
        end_turn(false);
      }
      mbarrier_wait(k_full + 8 * ring.stage, ring.phase);
      mbarrier_wait(v_full + 8 * ring.stage, ring.phase);
      if (thread == 0) {
        mbarrier_arrive(k_empty + 8 * ring.stage);
        mbarrier_arrive(v_empty + 8 * ring.stage);
      }
      ring.advance();
    }
    if (empty_turns) {
      begin_turn();
      end_turn(true);
    }

    float o[1][kOAccs];
#pragma unroll
    for (int i = 0; i < kOAccs; ++i) o[0][i] = 0.0f;
    float s[kSAccs];
    unsigned int pa[kPSteps][4];
    float row_max[2] = {attn::negative_infinity(), attn::negative_infinity()};
    float row_sum[2] = {0.0f, 0.0f};  // this lane's share; the quad's sum at the end

    // O += P·V for the block whose V lands in `v_stage` with parity `v_phase` (P in pa): one
    // wgmma group, fenced on its own since the barrier wait separates it from the S wgmma's fence.
    auto issue_pv = [&](int v_stage, unsigned int v_phase) {
      const unsigned int v_tile = smem_v + v_stage * kKvBytes;
      mbarrier_wait(v_full + 8 * v_stage, v_phase);
      wgmma_fence();
#pragma unroll
      for (int i = 0; i < kPSteps; ++i)
        wgmma_m64k16_rs<T, kHeadDim, 1>(o[0], pa[i],
                                        mnmajor_descriptor(v_tile + 2048 * i, kKvSlabBytes), 1);
      wgmma_commit();
    };

    // Once P·V has completed: O and P may be touched again, and the block's stage is free.
    auto retire_pv = [&](int v_stage) {
      wgmma_wait<0>();
      fence_accumulators(o[0]);
#pragma unroll
      for (int i = 0; i < kPSteps; ++i) fence_operands(pa[i]);
      if (thread == 0) mbarrier_arrive(v_empty + 8 * v_stage);
    };

    // Once S of the current stage's block has completed: its K slot is free.
    auto release_k = [&]() {
      if (thread == 0) mbarrier_arrive(k_empty + 8 * ring.stage);
    };

    // S = Q·Kᵀ for the block in the current stage: one wgmma group (scale-d 0 on the first step).
    auto issue_scores = [&]() {
      const unsigned int k_tile = smem_k + ring.stage * kKvBytes;
      mbarrier_wait(k_full + 8 * ring.stage, ring.phase);
      fence_accumulators(s);
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks)
        wgmma_m64k16_ss<T, kBlockN, 0>(
            s, kmajor_descriptor(q_tile + (ks / 4) * fa3::kBoxBytes + 32 * (ks % 4)),
            kmajor_descriptor(k_tile + (ks / 4) * kKvSlabBytes + 32 * (ks % 4)), ks > 0);
      wgmma_commit();
    };

    // The online softmax of key block `block` on the finished scores s: masks the seqlen_k tail
    // and (causal) the keys right of the diagonal with -inf, then P = 2^(S c - m_new c) in place,
    // with c = scale_log2; a row whose max is still -inf (no visible key yet) uses base 0, so its
    // P and its factor are 0. factor[h]: what O's row h must be multiplied by.
    auto softmax = [&](int block, float(&factor)[2]) {
      fence_accumulators(s);
      const int key0 = block * kBlockN + 2 * (lane % 4);
      const bool masked = block * kBlockN + kBlockN > seq.seqlen_k ||
                          (kCausal && block * kBlockN + kBlockN - 1 > row_begin + diagonal);
      if (masked) {
#pragma unroll
        for (int j = 0; j < kSAccs / 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = key0 + 8 * j + (e & 1);
            const int row = row0 + 8 * (e >> 1);
            const bool visible = key < seq.seqlen_k && (!kCausal || key <= row + diagonal);
            if (!visible) s[4 * j + e] = attn::negative_infinity();
          }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float block_max = s[2 * h];
#pragma unroll
        for (int j = 0; j < kSAccs / 4; ++j)
          block_max = fmaxf(block_max, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
        block_max = attn::quad_reduce<true>(block_max);
        const float new_max = fmaxf(row_max[h], block_max);
        const float base = new_max == attn::negative_infinity() ? 0.0f : new_max * scale_log2;
        factor[h] = exp2_approx(row_max[h] * scale_log2 - base);
        row_max[h] = new_max;
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kSAccs / 4; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float v = exp2_approx(fmaf(s[4 * j + 2 * h + e], scale_log2, -base));
            s[4 * j + 2 * h + e] = v;
            sum += v;
          }
        row_sum[h] = row_sum[h] * factor[h] + sum;
      }
    };

    mbarrier_wait(q_full + 8 * q_ring.stage, q_ring.phase);
    if (marks) fa3::trace_mark(p, kAttnTraceQLanded);
    if (my_end > first_block) {
      open_turns();
      // The first (last-indexed) block: O is zero, so no P·V is pending and nothing to rescale.
      float factor[2];
      begin_turn();
      issue_scores();
      end_turn(false);
      release_last_q(after_first);
      wgmma_wait<0>();
      if (marks) fa3::trace_mark(p, kAttnTraceFirstScores);
      release_k();
      softmax(my_end - 1, factor);
      pack_a_operand<T>(pa, s);
      StageRing<kStages> previous = ring;
      ring.advance();
#pragma unroll 1
      for (int block = my_end - 2; block >= first_block; --block) {
        begin_turn();
        issue_scores();
        // P·V of the previous block runs on the tensor cores during this block's softmax.
        issue_pv(previous.stage, previous.phase);
        end_turn(false);
        wgmma_wait<1>();
        release_k();
        softmax(block, factor);
        retire_pv(previous.stage);
        // Rescale O only when a row of the warp raised its max (the factor is exactly 1
        // otherwise).
        if (__any_sync(0xFFFFFFFFu, factor[0] != 1.0f || factor[1] != 1.0f)) {
#pragma unroll
          for (int j = 0; j < kOAccs / 4; ++j) {
            o[0][4 * j] *= factor[0];
            o[0][4 * j + 1] *= factor[0];
            o[0][4 * j + 2] *= factor[1];
            o[0][4 * j + 3] *= factor[1];
          }
        }
        pack_a_operand<T>(pa, s);
        previous = ring;
        ring.advance();
      }
      fence_accumulators(o[0]);
      begin_turn();
      issue_pv(previous.stage, previous.phase);
      end_turn(true);
      retire_pv(previous.stage);
      if (marks) {
        fa3::trace_mark(p, kAttnTraceLoopDone);
        fa3::trace_cycles(p, kAttnTraceLoopCycles);
      }
    } else {
      release_last_q(after_first);
    }

    // Normalize: O /= l, lse = m · softmax_scale + ln l; a row with no visible key (in this
    // split) has l = 0 and gets O = 0, lse = -inf.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float sum = attn::quad_reduce<false>(row_sum[h]);
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
#pragma unroll
      for (int j = 0; j < kOAccs / 4; ++j) {
        o[0][4 * j + 2 * h] *= inv;
        o[0][4 * j + 2 * h + 1] *= inv;
      }
      const int row = row0 + 8 * h;
      const long long row_index = attn::lse_index(p, seq, batch, head, row);
      const float lse =
          sum > 0.0f ? row_max[h] * p.softmax_scale + logf(sum) : attn::negative_infinity();
      if constexpr (kSplitKv) {
        if (row < seq.seqlen_q) fa3::store_partial_row(p, t.split, row_index, o[0], h, lane, lse);
      } else if constexpr (kWriteLse) {
        if (lane % 4 == 0 && row < seq.seqlen_q && p.lse != nullptr) p.lse[row_index] = lse;
      }
    }

    // Stage O in this warpgroup's Q boxes (every wgmma reading them is complete) and TMA-store it;
    // rows past seqlen_q fall outside a padded batch's map and are not written; a packed batch's
    // box that crosses its sequence's end is stored directly. Split-KV wrote its partials.
    if (kSplitKv || row_begin >= seq.seqlen_q) return;
    if (p.cu_seqlens_q != nullptr && row_begin + fa3::kRows > seq.seqlen_q) {
      fa3::store_rows_direct(p,
                             static_cast<T*>(p.o) + head * p.o_stride.head +
                                 static_cast<long long>(seq.q_begin) * p.o_stride.row,
                             row0, seq.seqlen_q, o[0], lane);
      return;
    }
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab)
      sm90::stage_slab<T>(q_tile + slab * fa3::kBoxBytes, o, slab, warp, lane);
    fence_proxy_async_shared();
    named_barrier_sync(1 + consumer, 128);
    if (thread == 0) {
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab)
        tma_store_4d(&params.o_map, q_tile + slab * fa3::kBoxBytes, 64 * slab,
                     seq.q_begin + row_begin, head, w.map_batch);
      bulk_commit_group();
      // Only until the stores have read the staging buffer: shared memory must outlive that, the
      // global writes complete on their own, and the SM takes its next CTA sooner (short rows run
      // many waves of CTAs). A persistent CTA waits under its next tile's first S (release_last_q).
      if constexpr (!kPersistent) bulk_wait_group_read<0>();
      if (marks) fa3::trace_mark(p, kAttnTraceStored);
    }
  };
  if constexpr (kPersistent) {
    fa3::Tile t;
    TileWork w;
    int worked = 0;
#pragma unroll 1
    for (int turn = 0; next_tile(turn, t); ++turn) {
      if (!tile_work(t, w)) continue;
      consume(t, w, worked++ > 0);
      q_ring.advance();
    }
    if (thread == 0) bulk_wait_group_read<0>();
    if (consumer == 0 && thread == 0) {
      fa3::trace_mark(p, kAttnTraceDone);
      fa3::trace_count(p, kAttnTraceTiles, worked);
    }
  } else {
    consume(only_tile, only_work, false);
    if (consumer == 0 && thread == 0) {
      fa3::trace_mark(p, kAttnTraceDone);
      fa3::trace_count(p, kAttnTraceTiles, 1);
    }
  }
}

}  // namespace kt
