// How the attention backward divides head_dim, one constexpr computation shared verbatim by the
// host (grids, validate(), the model) and the device (attention_bwd_rows.cuh, the sm80 and sm90
// kernels and their shared-memory layout): plain C++, no CUDA.
#pragma once

#if defined(__CUDACC__)
#define KT_BWD_SPLIT_FN __host__ __device__
#else
#define KT_BWD_SPLIT_FN
#endif

namespace kt {
namespace attn_bwd {

// The parts a key block's dK, dV and dQ columns are split among: 2 at head_dim 256 (a thread's dK
// and dV of its keys at the whole head_dim would exceed its registers), else 1. The fa2 family
// gives each part a CTA, which recomputes Sᵀ and dPᵀ over the whole head_dim; the fa3 family a
// consumer warpgroup of the CTA, which computes them for its share of the step's query rows.
constexpr KT_BWD_SPLIT_FN int head_dim_parts(int head_dim) { return head_dim == 256 ? 2 : 1; }

// fa3: whether the consumers stage dQ in FP32 over the step's Q and dO tiles (once every product
// of the step has read them) rather than in a staging of its own: with head_dim parts two stages
// of Q and dO leave no room for one. Either way TMA reductions add it to the accumulator.
constexpr KT_BWD_SPLIT_FN bool fa3_dq_staged_in_stage(int head_dim) {
  return head_dim_parts(head_dim) > 1;
}

// fa3: a consumer warpgroup's registers a thread (setmaxnreg, with two consumers), and those its
// FP32 accumulators may take: dK and dV of its columns, Sᵀ and dPᵀ of its query rows (the rest
// holds the packed A operands, dQ and addressing).
constexpr int kFa3ConsumerRegisters = 240;
constexpr int kFa3AccumulatorRegisters = 208;

// fa3: the step's query rows a consumer computes Sᵀ and dPᵀ for: the head_dim parts sharing a key
// block split them.
constexpr KT_BWD_SPLIT_FN int fa3_step_rows(int head_dim, int block_m) {
  return block_m / head_dim_parts(head_dim);
}

// fa3: whether a step's dQ is computed transposed, dQᵀ = Kᵀ·dSᵀ with head_dim as the wgmma's M
// and the step's block_m query rows as its N: when block_m is no multiple of 64, the wgmma's M
// (block_m 80 at head_dim 128, FlashAttention-3's choice for full masks). Such a dQ is staged
// transposed in boxes of block_m rows; otherwise in boxes of 64 rows, one m64 tile.
constexpr KT_BWD_SPLIT_FN bool fa3_dq_transposed(int block_m) { return block_m % 64 != 0; }
constexpr KT_BWD_SPLIT_FN int fa3_dq_box_rows(int block_m) {
  return fa3_dq_transposed(block_m) ? block_m : 64;
}

// Threads of the row kernels (preprocess, convert), a row to each group of row_slots(head_dim).
constexpr int kRowThreads = 128;

// The lanes of the row kernels that hold a row of head_dim elements, head_dim / 8 of them busy
// (8 elements, 16 bytes each): the power of two that holds them (16 at head_dim 96, whose last 4
// lanes idle), so a row's sum is a butterfly within its group.
constexpr KT_BWD_SPLIT_FN int row_slots(int head_dim) {
  return head_dim / 8 <= 8 ? 8 : head_dim / 8 <= 16 ? 16 : 32;
}

}  // namespace attn_bwd
}  // namespace kt
