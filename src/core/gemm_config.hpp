// One point of the GEMM search space, declared once: its fields and their domains, the cheap
// validity predicate, the launch plan and the template arguments. The generator, tuner, cache
// and runtime all use these; nothing re-derives grid sizes or shared memory elsewhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_desc.hpp"
#include "core/gemm_problem.hpp"
#include "core/launch_plan.hpp"

namespace kt {

// Template family. kSm80: mma.sync m16n8k16 + ldmatrix + cp.async multistage (runs on sm_80+).
// kSm90: wgmma + TMA + mbarrier ring, a producer warpgroup feeding 1 or 2 consumer warpgroups,
// persistent CTAs (sm_90a only). kSmallM: M <= 64 (decoding), B streamed from global memory
// straight into mma.sync fragments, warps along N and K (runs on sm_80+; gemm_small_m.hpp).
enum class GemmFamily : std::uint8_t { kSm80, kSm90, kSmallM };

struct GemmConfig {
  GemmFamily family = GemmFamily::kSm80;
  int tile_m = 128;       // CTA tile, rows of C
  int tile_n = 128;       // CTA tile, columns of C
  int tile_k = 32;        // K depth of one pipeline stage (sm90: 64, or 128 or 256 with nt)
  int warp_m = 64;        // warp tile rows (sm80; 0 for sm90)
  int warp_n = 64;        // warp tile columns (sm80; 0 for sm90)
  int stages = 4;         // shared-memory pipeline depth
  int raster_group = 8;   // CTA rows per group of the grouped (L2-friendly) raster order
  int split_k = 1;        // K slices; > 1 adds an FP32 workspace (and, for sm80 and small-M,
                          // a reduce kernel; sm90 reduces inside the main kernel)
  int consumers = 0;      // sm90: consumer warpgroups (1 or 2), each owning tile_m / consumers
                          // rows; 0 for sm80
  int epilogue = 0;       // sm90: 0 stores C from registers; n > 0 stages column slabs of C
                          // (sm90_slab_columns) in n shared buffers per consumer and
                          // TMA-stores them (overlapping the next tile); 0 for sm80
  int cluster = 1;        // sm90: CTAs per cluster along M (1 or 2); a pair shares its B tile by
                          // TMA multicast; 1 for sm80
  int warps_k = 0;        // small-M: warps splitting the CTA's K range; 0 for sm80 and sm90
  int cluster_k = 1;      // sm90 split-K: 1 reduces the splits through L2 (flags in the
                          // workspace); split_k puts a tile's splits in one cluster, reduced
                          // through distributed shared memory (key field clk<split_k>)
  bool swap_ab = false;   // sm90, nt: the kernel computes C^T = B·A^T (oriented_problem), so
                          // tile_m tiles N and tile_n tiles M: a decode step's weights on the
                          // wgmma M side, its few tokens on the N side (key suffix .swab)
  int cluster_n = 1;      // sm90: CTAs per cluster along N (1 or 2; key field cn2 in place of
                          // cl1); a pair shares its A tile by TMA multicast
  bool stream_k = false;  // sm90, no split-K or cluster: the units past the last whole wave
                          // of CTAs are shared out by K over every CTA (stream_k_region), the
                          // tiles cut between CTAs summed through L2 (key suffix .st)
  bool warp_specialized = true;  // sm90: a producer warpgroup issues the loads; false (no
                                 // split-K, stream-K, cluster or swap-AB): the consumers' first
                                 // thread issues them a ring ahead (key suffix .nows)

  // sm90: one producer warpgroup (if warp-specialized) plus the consumers, 4 warps each.
  // small-M: tile_n / warp_n warps along N times warps_k along K.
  int num_warps() const {
    if (family == GemmFamily::kSm90) return 4 * ((warp_specialized ? 1 : 0) + consumers);
    if (family == GemmFamily::kSmallM) return warp_n > 0 ? tile_n / warp_n * warps_k : 0;
    return (tile_m / warp_m) * (tile_n / warp_n);
  }
  int num_threads() const { return 32 * num_warps(); }
  bool operator==(const GemmConfig&) const = default;
};

// The value domains the tuner enumerates (validate() is the authority on combinations). The
// sm80 family takes tile_m .. warp_n and stages; sm90 its own tiles, stages and consumers (its
// tile_k is 64); raster_group and split_k are shared.
struct GemmDomains {
  std::vector<GemmFamily> families{GemmFamily::kSm80, GemmFamily::kSm90, GemmFamily::kSmallM};
  std::vector<int> tile_m{16, 32, 64, 128, 256};
  std::vector<int> tile_n{32, 64, 128, 256};
  std::vector<int> tile_k{32, 64};
  std::vector<int> warp_m{16, 32, 64};
  std::vector<int> warp_n{16, 32, 64};
  std::vector<int> stages{2, 3, 4, 5};
  std::vector<int> raster_group{1, 8};
  std::vector<int> split_k{1, 2, 3, 4, 6, 8, 12, 16};
  // More splits for the sm80 family where an operand is loaded element by element (unaligned):
  // those loads expose their latency, so more CTAs in flight is what hides it (cuBLASLt splits
  // skinny deep-K problems 66 ways). Aligned operands stream by cp.async or TMA, where the sm90
  // family's best with at most 16 splits beat every config with 24 or 32 on the deep-K shapes
  // of the unseen benchmark (bench/NOTES.md, "sm90 GEMM schedules").
  std::vector<int> element_split_k{24, 32, 48, 64};
  std::vector<int> sm90_tile_m{64, 128, 256};
  std::vector<int> sm90_tile_n{32, 64, 128, 144, 192, 256};
  // 9: the deepest ring of 24 KB stages (64 x 32 bk128, 64 x 128 bk64) in 227 KB, which decode
  // steps' streams can use.
  std::vector<int> sm90_stages{3, 4, 5, 6, 8, 9, 12};
  std::vector<int> sm90_consumers{1, 2};
  std::vector<int> sm90_epilogue{0, 2, 4};
  std::vector<int> sm90_cluster{1, 2};
  // The split counts whose split-K configs are also tried with the splits in one cluster
  // (cluster_k = split_k, at most 8). Only pairs: larger clusters do not all fit at once on a
  // GPU whose GPCs do not split into whole clusters (cuOccupancyMaxActiveClusters), so a launch
  // that needs every SM runs a second wave.
  std::vector<int> sm90_cluster_splits{2};
  // Swap-AB (M <= kSm90SwapMaxM): the kernel's tile_n tiles the tokens (M), its tile_m the
  // weights (N); direct stores only.
  std::vector<int> sm90_swap_tile_n{16, 32, 64};
  // Swap-AB past decode steps (kSm90SwapMaxM < M <= this): token tiles fitted to M
  // (sm90_fitted_token_tiles), so that a few rows of tiles leave little of the last one empty
  // (M = 257 in 3 tiles of 88, not 3 of 128).
  std::int64_t sm90_fitted_swap_max_m = 2048;
  // Stages two or four swizzle atoms deep (tile_k 128, 256) are also tried for tiles of at
  // most sm90_deep_stage_max_rows rows plus columns (a 64-deep stage of at most 16 KB): their
  // ring is limited by one producer/consumer round trip a stage, not by its bytes in flight.
  std::vector<int> sm90_deep_tile_k{128, 256};
  int sm90_deep_stage_max_rows = 128;
  // small-M (only for M <= 64): rows of C per CTA, N columns per warp, warps along N and K, K
  // per warp per batch (tile_k).
  std::vector<int> small_m_tile_m{8, 16, 32, 64};
  std::vector<int> small_m_warp_n{16, 32, 64};
  std::vector<int> small_m_warps_n{1, 2, 4, 8};
  std::vector<int> small_m_warps_k{1, 2, 4, 8};
  std::vector<int> small_m_tile_k{16, 32, 64, 128, 256};
};

// Canonical key, e.g. "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
// "sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1" (c: consumer warpgroups, e: epilogue slabs staged
// for TMA stores or 0 for direct stores, cl: cluster size along M, or clkS: the S = split_k splits
// of a tile in one cluster, e.g. "sm90.bm128.bn128.bk64.s4.c2.e0.clk8.g8.sk8", or cn2: pairs
// along N sharing A, e.g. "sm90.bm64.bn32.bk64.s12.c1.e0.cn2.g8.sk1.swab"; a trailing
// ".swab" marks swap-AB, whose bm tiles N and bn tiles M, a trailing ".st" stream-K, a trailing
// ".nows" no producer warpgroup) or
// "smallm.bm16.bn128.bk64.wn64.wk4.sk1" (bk: K per warp per batch, wn: N per warp, wk: warps
// along K); parse is its exact inverse.
std::string to_key(const GemmConfig& config);
GemmConfig parse_gemm_config_key(std::string_view key);  // throws kt::Error naming the field

// The product the kernel computes: `p` itself, or for swap-AB C^T = B·A^T, M and N exchanged (the
// layout stays the caller's: kernel_a_k_major and kernel_b_k_major say what it means for the
// kernel's operands). Tiles, work units, the launch plan and the model count in this orientation;
// the caller's C is stored transposed.
GemmProblem oriented_problem(const GemmProblem& p, const GemmConfig& c);
// Whether the kernel's A and B (oriented_problem's) are K-major: A unless swap-AB takes an nn
// caller's K x N B as its (M-major) A; B with nt, or with swap-AB (the caller's A).
bool kernel_a_k_major(const GemmProblem& p, const GemmConfig& c);
bool kernel_b_k_major(const GemmProblem& p, const GemmConfig& c);
// Swap-AB is searched with the decode steps' token tiles (GemmDomains::sm90_swap_tile_n) for M
// at most this (tokens on the wgmma N side), with fitted ones above it.
inline constexpr std::int64_t kSm90SwapMaxM = 64;
// The token tiles fitted to M: for t tiles, ceil(M / t) rounded up to a multiple of 8, from 64
// to 256 columns, where M fills at least 90% of the t tiles, fullest first (the model weighs
// their waves: 1430 rows fill 6 tiles of 240 best, yet cuBLASLt's 11 of 136 make one wave).
std::vector<int> sm90_fitted_token_tiles(std::int64_t m);

// Derived quantities (functions, never stored). Tiles count along the kernel's M and N
// (oriented_problem).
std::int64_t tiles_m(const GemmProblem& p, const GemmConfig& c);
std::int64_t tiles_n(const GemmProblem& p, const GemmConfig& c);
// k-tiles of the whole K (tile_k deep).
std::int64_t k_tiles(const GemmProblem& p, const GemmConfig& c);
int smem_bytes(const GemmProblem& p, const GemmConfig& c);
// K range of one split, a multiple of tile_k: splits are [z*k_per_split, (z+1)*k_per_split).
std::int64_t k_per_split(const GemmProblem& p, const GemmConfig& c);
// The split-K workspace of every family: kGemmFlagRegionBytes of 32-bit flag words at its head,
// then the FP32 partial sums (splitk_partial_bytes). The flag region belongs to the sm90 family's
// in-kernel reduction (its launch epoch, an arrival count and one ready flag per (tile, split,
// consumer), see gemm_sm90.cuh); it must be zeroed once when the workspace is allocated
// (rt::clear_gemm_workspace_flags) and nothing else ever writes it, so no family stores partial
// sums there. 0 without split-K, and for sm90 cluster split-K (cluster_k > 1), which reduces in
// distributed shared memory.
// (sm90_flags.cuh keeps this / 4 as sm90::kFlagRegionWords: change both together.)
inline constexpr std::int64_t kGemmFlagRegionBytes = 64 * 1024;
// num_sms sizes sm90 stream-K's slots (one partial tile per CTA of the grid); others ignore it.
std::int64_t workspace_bytes(const GemmProblem& p, const GemmConfig& c, int num_sms);
// An operand the sm90 family reads from a copy with 16-byte rows (TMA needs 16-byte row strides):
// `operand` ('A' or 'B'), its `rows` of `cols` elements, `src_ld` apart in the caller's tensor
// and dst_ld (a multiple of 8) apart in the copy, `offset` bytes into the workspace; `launch`
// runs gemm_pad_rows over it before the main kernel.
struct GemmPaddedOperand {
  char operand = 'A';
  std::int64_t rows = 0, cols = 0, src_ld = 0, dst_ld = 0, offset = 0;
  LaunchPlan launch;
  std::int64_t bytes(const GemmProblem& p) const;  // the copy's
};
// The sm90 family's copied operand: nn's B with rows that are not 16-byte aligned but N even,
// which the producer warpgroup copies from the caller's tensor with cp.async of the returned bytes
// (8 when N % 4 == 0, else 4; gemm_sm90.cuh's kMnCopyBytes) in place of a padded copy. 0 when
// TMA loads it, it is padded, or the config has clusters, stream-K or no producer warpgroup.
int sm90_mn_copy_bytes(const GemmProblem& p, const GemmConfig& c);
// The sm90 family's padded operands, A first: A when K % 8 != 0, B when its rows are not 16-byte
// aligned (nt: K % 8 != 0, nn: N % 8 != 0) and not copied (sm90_mn_copy_bytes); in the workspace
// after split-K's or stream-K's flags and partial sums, never over the flag region. Empty for the
// other families.
std::vector<GemmPaddedOperand> sm90_padded_operands(const GemmProblem& p, const GemmConfig& c,
                                                    int num_sms);
// The FP32 partial sums alone: sm80 and small-M, split_k slices of M x N; sm90, one tile slot per
// (tile, split), split_k x tiles x tile_m x tile_n (the serial reducer leaves the last split's
// slots unused; the distributed mode, which a launch picks when every unit has a CTA, writes
// them: gemm_sm90.cuh).
std::int64_t splitk_partial_bytes(const GemmProblem& p, const GemmConfig& c);
// sm90: one tile's FP32 partial sums, which split-K writes to the workspace per split, stream-K
// per CTA, and cluster split-K and the bulk copies stage over the ring of stages.
std::int64_t sm90_partial_tile_bytes(const GemmConfig& c);
// sm90 split-K through L2: whether a unit moves its partial sums by bulk copies through the ring
// (the FP32 tile fits it, beside fewer than 128 accumulators a consumer thread) rather than by
// each thread's 16-byte accesses: gemm_sm90.cuh's kBulkPartials.
bool sm90_bulk_partials(const GemmProblem& p, const GemmConfig& c);
// sm90 split-K: the flag words of the flag region a launch needs (two counters' line, then one
// ready flag per (tile, split < split_k - 1, consumer)); at most kGemmFlagRegionBytes / 4. The
// distributed mode also raises the last split's flags, right after these; the kernel picks that
// mode only when they fit the region too (gemm_sm90.cuh; they always do in practice: it needs
// every unit resident, so split_k x tiles x consumers <= 2 x the grid's CTAs).
std::int64_t sm90_splitk_flag_words(const GemmProblem& p, const GemmConfig& c);
// sm90 stream-K: of the work_units() shared by `ctas` persistent CTAs, the last `units` are
// shared out by K, `iters` k-tiles a CTA (CTA b takes k-tiles [b * iters, (b + 1) * iters) of
// those units' k-tiles laid end to end), the others run whole, the same number on every CTA.
// `units` is what the last whole wave leaves over, or that plus one wave when less than half of
// one is left over (fewer, longer pieces); 0 when the units fill whole waves.
struct StreamKRegion {
  std::int64_t units = 0;
  std::int64_t iters = 0;
};
StreamKRegion stream_k_region(const GemmProblem& p, const GemmConfig& c, std::int64_t ctas);
// Registers per thread before compiling: accumulators + fragments + addressing (sm80); the
// allocation at launch, which setmaxnreg then redistributes between warpgroups (sm90).
int estimated_registers(const GemmConfig& c);

// Why `config` cannot run `problem` on `device`, or nullopt when it can. Cheap: no compile.
std::optional<std::string> validate(const GemmProblem& p, const GemmConfig& c,
                                    const DeviceDesc& device);

struct GemmLaunch {
  LaunchPlan main;
  std::optional<LaunchPlan> reduce;  // split-K of the sm80 and small-M families only
  // sm90 on operands whose rows are not 16-byte aligned: the copies the main kernel's TMA loads
  // read, made first (sm90_padded_operands).
  std::vector<GemmPaddedOperand> pads;
  std::int64_t workspace_bytes = 0;
};
// num_sms: the device's SM count. The persistent sm90 family launches min(work units, num_sms)
// CTAs (stream-K: num_sms), where a work unit is an output tile of one K split; 0 (no device
// known) plans one CTA per unit, for display only: a kernel is always planned with its device's
// SM count (GemmKernel), which split-K and stream-K need, since their in-kernel reductions spin
// on units of other CTAs and so rely on every CTA of the grid being resident at once. Clusters of 2
// (cluster {2, 1, 1}) launch 2 * min(cluster units, num_sms / 2), a cluster unit being a pair of
// vertically adjacent tiles. sm80 ignores it.
GemmLaunch plan_launch(const GemmProblem& p, const GemmConfig& c, int num_sms = 0);
// Output tiles times K splits: what the CTAs of the main kernel share out.
std::int64_t work_units(const GemmProblem& p, const GemmConfig& c);
// What the clusters share out: work_units() for cluster size 1; for clusters of 2, pairs of
// vertically adjacent tiles (tile rows rounded up to even) times K splits; for a tile's splits
// in one cluster (cluster_k), the tiles.
std::int64_t cluster_units(const GemmProblem& p, const GemmConfig& c);
// CTAs per cluster: cluster (along M) times cluster_k (a tile's splits).
int cluster_size(const GemmConfig& c);
// sm90 TMA-store epilogue: the columns of C one staged slab (one TMA store) covers. Tiles whose
// rows are whole 128-byte multiples of the output type stage 128-byte-wide slabs in the 128B
// swizzle (sm90_slabs_swizzled); the others (144 and 32 columns of 16-bit C, 144 of FP32) two
// half-tile slabs, row-major and unswizzled. gemm_sm90.cuh's kSlabCols is the same rule.
int sm90_slab_columns(const GemmProblem& p, const GemmConfig& c);
bool sm90_slabs_swizzled(const GemmProblem& p, const GemmConfig& c);

// Name of the kernel template and its template arguments for this (problem, config), e.g.
// "kt::gemm_sm80<kt::bf16, kt::bf16, 128, 128, 32, 64, 64, 4, true, true, false>" or
// "kt::gemm_sm90<kt::bf16, kt::bf16, 128, 256, 64, 4, 2, true, false, 2, 2, 1, false, 1, false,
// true, 0>".
std::string gemm_kernel_expression(const GemmProblem& p, const GemmConfig& c);
// The split-K reduce kernel of the sm80 and small-M families.
std::string gemm_reduce_expression(const GemmProblem& p);
// The name of the kernel that pads an operand's rows (sm90_padded_operands): "kt::gemm_pad_rows".
std::string gemm_pad_expression();

// Every config of `domains` that validate() accepts for (problem, device), in key order.
// Dominated points are dropped: tiles more than twice the padded problem and split-K where
// one split would be shallower than four k-tiles; sm90 stages 128 or 256 deep only for small
// tiles.
std::vector<GemmConfig> enumerate_gemm_configs(const GemmProblem& p, const DeviceDesc& device,
                                               const GemmDomains& domains = {});

}  // namespace kt
