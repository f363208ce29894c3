// The dynamic shared memory of the sm90 (fa3) attention backward kernel, one constexpr
// computation shared verbatim by the host (the launch's size, validate()) and the device
// (attention_bwd_sm90.cuh): plain C++, no CUDA.
#pragma once

#if defined(__CUDACC_RTC__)
#include "kerntune/attention_backward/attention_bwd_split.h"
#else
#include "ops/attention_backward/kernels/attention_bwd_split.h"
#endif

// The constructor runs in constant evaluation on both sides.
#if defined(__CUDACC__)
#define KT_BWD_LAYOUT_FN __host__ __device__
#else
#define KT_BWD_LAYOUT_FN
#endif

namespace kt {

// Offsets in bytes from a 1024-byte aligned base (every tile starts on a 1024-byte boundary, as
// the 128B swizzle needs): the K and V tiles of the CTA's block_n keys, `stages` pairs of Q and dO
// tiles of block_m rows, two dS tiles (the step's and the one before, still read by the other
// consumers' dQ; at head_dim 256 the step's dS and P), the FP32 dQ staging of a step (none at
// head_dim 256, attn_bwd::head_dim_parts > 1, where the consumers stage dQ over the step's Q and
// dO tiles), `stages` pairs of the rows' lse_log2 and D, each a TMA box of block_m + kStatsLead
// FP32 (a box starts on a 16-byte aligned element of global memory, so the step's rows start up
// to kStatsLead - 1 elements into it) in a slot of whole 128-byte lines (a box lands on 128 bytes
// of shared memory), and last the mbarriers (block_m 80 at head_dim 128 fills 227 KB but for
// them). 16-bit tiles are head_dim / 64 slabs of rows x 128 bytes (a TMA box each); a dS tile is
// block_n / 64 atoms of block_m query rows x 64 keys (128 bytes).
struct AttentionBwdSm90Layout {
  static constexpr int kBarrierBytes = 128;  // kv_full, full and empty of 4 stages, the ticket
  static constexpr int kAlignBytes = 1024;   // the base may lie this far above the buffer's start
  static constexpr int kStatsLead = 4;       // FP32 elements in 16 bytes
  static constexpr int kStatsLine = 32;      // FP32 elements in 128 bytes

  int kv_bytes;     // one K or V tile
  int q_bytes;      // one Q or dO tile
  int ds_bytes;     // one dS tile
  int dq_bytes;     // the dQ staging, block_m x head_dim FP32
  int stats_box;    // FP32 elements TMA loads of one stage's lse_log2 (and of its D)
  int stats_rows;   // FP32 elements of their slots
  int stats_bytes;  // one stage's lse_log2 and D slots
  int k, v;
  int q;   // stage s: Q at q + 2 s q_bytes, dO right after it
  int ds;  // buffer b at ds + b ds_bytes
  int dq;
  int stats;         // stage s: lse_log2 at stats + s stats_bytes, D right after it
  int barriers;      // the mbarriers and the deterministic ticket
  int bytes;         // from the base to the end
  int launch_bytes;  // the dynamic shared memory a launch asks for

  KT_BWD_LAYOUT_FN constexpr AttentionBwdSm90Layout(int head_dim, int block_m, int block_n,
                                                    int stages)
      : kv_bytes(block_n * head_dim * 2),
        q_bytes(block_m * head_dim * 2),
        ds_bytes(block_m * block_n * 2),
        dq_bytes(attn_bwd::fa3_dq_staged_in_stage(head_dim) ? 0 : block_m * head_dim * 4),
        stats_box(block_m + kStatsLead),
        stats_rows((block_m + kStatsLead + kStatsLine - 1) / kStatsLine * kStatsLine),
        stats_bytes(2 * stats_rows * 4),
        k(0),
        v(k + kv_bytes),
        q(v + kv_bytes),
        ds(q + stages * 2 * q_bytes),
        dq(ds + 2 * ds_bytes),
        stats(dq + dq_bytes),
        barriers(stats + stages * stats_bytes),
        bytes(barriers + kBarrierBytes),
        launch_bytes(bytes + kAlignBytes) {}
};

}  // namespace kt

#undef KT_BWD_LAYOUT_FN
