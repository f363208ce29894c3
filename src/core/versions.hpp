// Versions that are part of every tuning key: a result measured under another protocol or
// against other templates is not silently reused.
#pragma once

namespace kt {

// Bump when the measuring protocol changes what a median means (flush, clocks, repeats).
// 2: the L2 flush reads a buffer of 2 x L2 (1 wrote one, leaving dirty lines to write back).
// 3: a GEMM's repetitions rotate over up to 8 separately allocated copies of its operands.
// 4: a repetition's start event, kernel and stop event run back to back behind a launch gate
//    (tuner/launch_gate.hpp): time the host thread spent between those calls is not timed.
// 5: repetitions sized to 25 ms of kernel time in [5, 100] after a warm-up of at least 2 ms, and
//    a candidate whose 3 probe repetitions all exceed 1.05 x the run's best median stops there:
//    first-pass rows may hold 3 repetitions, and medians of fewer repetitions spread more.
inline constexpr int kBenchmarkProtocolVersion = 5;
// Bump when a GEMM template changes its performance or its config semantics.
// 2: the sm90 keys gained e (TMA-store epilogue) and cl (cluster) fields.
// 3: sm90 split-K reduces inside the kernel (no reduce launch; any epilogue with split-K).
// 4: sm90 split-K reduces distributed (every split a stripe of the tile) when all units are
//    resident at once; the workspace holds a slot and a flag per (tile, split).
// 5: the sm90 split-K launch epoch is read by a consumer thread, not before the first loads.
// 6: sm90 split-K batches its reduction loads and flag polls (one L2 round trip per batch, not
//    per split) and reads the launch epoch off the consumers' path; sm90 gains 32-column tiles.
// 7: sm90 144- and 32-column tiles gain the TMA-store epilogue (two unswizzled half-tile slabs).
// 8: sm90 gains swap-AB configs (key suffix swab) and 16-column tiles for decode steps.
// 9: sm90 gains stages two or four swizzle atoms deep (bk128, bk256; nt) for small tiles.
// 10: sm90 distributed split-K moves partial sums by bulk copies through the ring.
// 11: sm90 pairs end with the producer waiting for its stages' releases, not a cluster barrier.
// 12: sm90 units of odd waves walk K downward (serpentine K; not with split-K).
// 13: sm90 gains stream-K configs (key suffix st) for shapes whose units leave a last wave
//     partly empty.
// 14: sm90 distributed split-K by bulk copies sums its stripe wholly from shared memory (its
//     own partials written beside the peers' stripes): a third of the sum's instructions.
// 15: sm90 gains configs without warp specialization (key suffix nows): the consumers' first
//     thread issues the loads.
// 16: sm90 as a composition of producer, consumer, epilogue and schedule headers: the code
//     NVVM emits moves (instruction order, two split-K reductions 2-3% larger in SASS).
// 17: sm90 tiles of up to 144 accumulators a consumer thread when unsplit (256 x 136, 128 x 144);
//     swap-AB's direct stores of 16-bit C transposed across the warp, one access a pair.
// 18: sm90 swap-AB for nn too: the caller's K x N B as an M-major A (wgmma's A transpose bit).
// 19: sm90 split-K's striped sums (distributed, cluster) load every split, the unit's own too,
//     in run-time loops (sum_quads): NVRTC compiles a split-K kernel in about half the time.
// 20: sm90 serves rows TMA cannot address (K % 8 != 0, nn's N % 8 != 0) from copies padded to
//     16-byte rows (gemm_pad_rows).
// 21: sm90 stages several atoms deep (tile_k 128, 256) for nn too: an M- or N-major operand's box
//     is 64 columns by the stage's K-rows.
// 22: sm90 swap-AB's transposed direct stores trade pairs within a quad: 8 bytes a lane, each
//     32-byte sector of C in one request (the epilogue of a 256 x 136 tile 6.3 -> 2.9 us).
// 23: sm90's direct stores of 16-bit C in the kernel's orientation trade adjacent 8-column
//     blocks within a quad: 8 bytes a lane, a 32-byte sector a quad (4096^3's 128 x 256 e0 tile
//     198 -> 181 us on an H100).
// 24: sm90 copies nn's B of even N % 8 != 0 straight into the stages with the producer
//     warpgroup's 4- or 8-byte cp.async (sm90_mn_copies.cuh) where a config has no clusters or
//     stream-K, in place of the padded copy and its kernel.
inline constexpr int kGemmTemplateVersion = 24;
// Bump when an attention template changes its performance or its config semantics.
// 4: the fa3 family (sm_90a) joins the space, so winners tuned over fa2 alone are stale.
// 5: fa3's stage ring shared with the GEMM (common/stage_ring.cuh): its instruction order moves.
// 6: fa3 ping-pong, three consumers and packed GQA decode join the space; K and V free their
//    stages separately.
// 7: fa3 split-KV joins the space.
// 8: fa3 persistent CTAs and blocks of 80 keys (d256) join the space; with
//    one consumer a one-warp producer (160 threads), so CTAs of few registers share an SM.
// 9: causal tiles (fa2, fa3 persistent or one CTA a block) longest first over sections of
//    entries whose K and V fit L2.
// 10: a causal section holds at most 32 entries (common/work_order.h), so the CTAs of a wave share
//     an entry's K and V loads.
// 11: persistent CTAs' causal sections keep the L2 bound alone (their snake needs each block of a
//     section to span the grid).
// 12: persistent CTAs' causal sections are the model's choice for their grid
//     (persistent_causal_section: the busiest CTA's work least under the snake).
// 13: fa3 ping-pong: a consumer whose rows all lie past seqlen_q takes its turns empty.
// 14: fa3 split-KV: splits of floor or ceil(blocks / splits) key blocks (were ceil, the last ones
//     short or empty), and persistent CTAs working splits of tiles.
inline constexpr int kAttentionTemplateVersion = 14;

}  // namespace kt
