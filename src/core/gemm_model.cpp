// The analytic GEMM model: ranks configs for the tuner and picks them where nothing is measured.
// Constants are fitted to measurements; the figures behind them are in bench/NOTES.md ("The GEMM
// model and its calibration").
#include "core/gemm_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/arith.hpp"
#include "core/gemm_small_m.hpp"

namespace kt {

namespace {

constexpr double kLaunchUs = 2.5;           // launch and ramp of one kernel
constexpr double kPipelineFillTiles = 1.0;  // k-tiles of latency before the first mma
// The padded copies of unaligned operands (sm90_padded_operands) stream at this share of DRAM's
// bandwidth, about a device copy's: at 0.6 every padded sm90 config the nn unseen shapes measured
// on the H200 ran 0.88-0.96 of its prediction (bench/NOTES.md, the model's constants).
constexpr double kPadCopyOfDram = 0.85;
// The share of the smaller of the compute and memory terms that does not hide under the larger:
// loads, barrier round trips and (padded) MMA issue share the SM. Without it every streaming
// config ties at a decode step's memory floor. Every family's estimate ends with it
// (finish_estimate).
constexpr double kOverlapLoss = 0.1;
// DRAM's rate under a given number of bytes of DRAM loads outstanding (Little's law): the rate
// is those bytes over the loaded latency, which grows with the rate itself (queueing): latency =
// kDramIdleLatencyUs + kDramQueueLatencyUs x rate / peak. Only the share of a CTA's loads that
// DRAM serves counts (the rest hits L2: a decode step's A). Fitted on traced decode and split-K
// main loops; a single constant (bytes in flight that saturate DRAM) fitted one kind, not both.
constexpr double kDramIdleLatencyUs = 1.2;
constexpr double kDramQueueLatencyUs = 0.75;

// The DRAM rate (bytes/s) that `inflight` bytes of outstanding DRAM loads sustain, at most
// `peak`: the positive root of rate = inflight / (idle + queue x rate / peak).
double dram_rate(double inflight, double peak) {
  const double a = kDramQueueLatencyUs * 1e-6 / peak, b = kDramIdleLatencyUs * 1e-6;
  const double rate = (-b + std::sqrt(b * b + 4.0 * a * inflight)) / (2.0 * a);
  return std::min(peak, rate);
}
// sm90: the fraction of the wgmma rate a warp-specialized CTA sustains in its main loop, at
// 8192^3's clock. Two consumer warpgroups hide each other's issue gaps; one leaves them exposed.
constexpr double kWgmmaEfficiencyTwoConsumers = 0.78;
constexpr double kWgmmaEfficiencyOneConsumer = 0.62;
// sm90: under a sustained wgmma load the power limit, not the nominal clock, sets the SMs' clock,
// and the longer the load the lower it falls. The efficiencies above were fitted at 8192^3 (1.4
// ms), so shorter kernels gain the ratio of the two measured clocks, falling log-linearly with
// the duration between kSm90ShortRunUs and kSm90LongRunUs (bench/NOTES.md, "Limits found on the
// H200"). Measured on one GPU model; every sm90 device shares them until another is measured.
constexpr double kSm90ShortRunUs = 200;
constexpr double kSm90LongRunUs = 1400;
constexpr double kSm90ShortRunClockGain = 1640.0 / 1430.0;
// sm90: from a CTA's entry to its first TMA load issued (barrier init, the first unit's set-up,
// first execution of that code; bench/NOTES.md, "Limits found on the H200"). It overlaps nothing;
// the load's own round trip is the pipeline fill or DRAM's latency.
constexpr double kSm90PrologueUs = 1.0;

// sm90: each wgmma m64nNk16 reads 64 x 16 of A and N x 16 of B from shared memory for
// 64 x N x 16 FMAs, so narrow instructions need more operand bytes a clock. N = 256 is the
// reference; N = 64 is measured (0.69 of N = 128's rate per FMA); widths between these anchors
// (swap-AB tiles fitted to the tokens) are interpolated linearly; 16 and 32 (decode steps, which
// stream from DRAM) are untimed and take 64's factor.
double sm90_tile_factor(const GemmConfig& c) {
  constexpr double kN128Factor = 0.95;
  constexpr std::array<std::pair<int, double>, 4> kAnchors{
      {{64, 0.69 * kN128Factor}, {128, kN128Factor}, {192, 0.98}, {256, 1.0}}};
  if (c.tile_n <= kAnchors.front().first) return kAnchors.front().second;
  for (std::size_t i = 1; i < kAnchors.size(); ++i) {
    const auto [n1, f1] = kAnchors[i];
    if (c.tile_n > n1) continue;
    const auto [n0, f0] = kAnchors[i - 1];
    return f0 + (f1 - f0) * double(c.tile_n - n0) / double(n1 - n0);
  }
  return kAnchors.back().second;
}

// sm90: one wave of persistent CTAs spans all of the SMs' tiles at once; in plain row order
// (raster group 1) that is a few whole rows of tiles, which stream all of B through L2 again for
// every few rows once the operands outgrow L2 (fast.cu's grouped order was worth a few percent).
constexpr double kSm90UngroupedFactor = 0.97;

// The bytes of A and B.
double operand_bytes(const GemmProblem& p) {
  return (double(p.m) + double(p.n)) * double(p.k) * size_bytes(p.in_dtype);
}

// Plain row order (raster group 1) over tiles in several rows and several columns, with operands
// that outgrow half of L2: the case where grouped order keeps more of them in L2. A single row or
// column of tiles (every unswapped decode step) reads each tile of its large operand once in any
// order; a swapped step's order matters the other way (swapped_sharers_apart).
bool ungrouped_order_matters(const GemmProblem& p, const GemmConfig& c, const GemmEstimate& e,
                             const DeviceDesc& d) {
  return c.raster_group == 1 && !c.swap_ab && e.tiles_m > 1 && e.tiles_n > 1 &&
         operand_bytes(p) > 0.5 * double(d.l2_bytes);
}

// The DRAM bytes that order reads again: it walks each row of tiles across N, so every row of
// tiles (every pair of rows for clusters along M, which share their B tiles) reads all of the
// kernel's B, and each further row reads again the share of B that L2 cannot hold (1 - L2 / B; none
// while B fits). On an H100, 12230 x 24576 x 8192's 400 MB of B over 96 rows of 128 x 256 tiles
// ran 11311 us in row order against 6355 grouped, 7358 in cluster pairs (bench/NOTES.md, "The
// GEMM model and its calibration").
double ungrouped_reread_bytes(const GemmProblem& p, const GemmConfig& c, const GemmEstimate& e,
                              const DeviceDesc& d) {
  if (!ungrouped_order_matters(p, c, e, d)) return 0;
  const GemmProblem q = oriented_problem(p, c);
  const double b_bytes = double(q.n) * double(q.k) * size_bytes(p.in_dtype);
  const double rows = double(ceil_div(e.tiles_m, std::int64_t(c.cluster)));
  return b_bytes * (rows - 1.0) * std::max(0.0, 1.0 - double(d.l2_bytes) / b_bytes);
}

// sm90 swapped decode steps stream the weights as the kernel's A; a tile row of it is shared by
// one CTA per token tile (tiles_n > 1 from 64 tokens on a 32-column tile). Row order makes the
// sharers consecutive in launch order, side by side; grouped order puts them `group` launch
// slots apart, which streams measurably slower (bench/NOTES.md, "The GEMM model and its
// calibration").
constexpr double kSm90SwappedGroupedStreamFactor = 1.15;

// sm90 stream-K over fewer units than CTAs (every CTA runs pieces only, no whole unit): each CTA
// streams two tiles' K ranges one after the other, each piece filling its pipeline anew, and
// DRAM is measurably less busy than for whole tiles (bench/NOTES.md, "The GEMM model and its
// calibration").
constexpr double kSm90StreamKPiecesOnlyStreamFactor = 1.15;

bool stream_k_pieces_only(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& d) {
  return c.stream_k && stream_k_region(p, c, d.num_sms).units == work_units(p, c);
}

bool swapped_sharers_apart(const GemmConfig& c, const GemmEstimate& e) {
  return c.family == GemmFamily::kSm90 && c.swap_ab && c.raster_group > 1 && e.tiles_n > 1;
}

// sm90 clusters of 2 (B multicast to both CTAs, or A with cn2) get no credit for the halved
// reads and pay for where the cluster launch puts them: consecutive clusters packed into one GPC,
// whose CTAs then read the same operand blocks from different TPCs (slower at L2-fed shapes:
// bench/NOTES.md, "Limits found on the H200"). Not for cluster split-K (clkS), whose CTAs share
// no operand.
constexpr double kSm90ClusterL2Factor = 1.2;
// sm90 cluster split-K (clkS): its pairs' main loops run slower than unpaired CTAs' over the same
// k-tiles, at every size from one wave to 347 (as pairs along M pay for their placement, whose
// factor above charges L2 only). Fitted on 314 clk2 measurements of 40 shapes off every suite
// (1.28x the estimate without it, 1.015x with it) and checked on the suites' 93 and the
// tuning-quality rerun's 438 (1.25x and 1.21x without, 1.02x and 1.00x with): bench/NOTES.md,
// "The GEMM model and its calibration".
constexpr double kSm90ClusterSplitFactor = 1.4;
// sm90 direct stores of C (e0) in the kernel's own orientation, while the tensor cores wait.
// Fitted against the TMA-store twins of the same configs when a warp's store wrote half sectors
// (template version 20: 1.9-2.9 us more a wave for 128 x 128 tiles, 4-6.6 for 128 x 256, where
// the L2 share predicted 0.15 and 0.29); since whole sectors (version 23) any rate from 12.5 to
// 50 GB/s makes the same picks (bench/NOTES.md, "The GEMM model and its calibration").
constexpr double kSm90DirectStoreGbpsPerSm = 12.5;
// sm90 TMA-store epilogue: the consumers write the tile to shared memory (stmatrix, 128 B/clock)
// plus two named barriers per 128-byte slab; the global writes drain during the next tile.
constexpr double kSm90SlabBarrierUs = 0.02;

// sm90 split-K: what one SM moves between L2 and its registers when few SMs do so at once (the
// serial reducers of the last wave): a lead, not a measurement. When many SMs move partial sums
// at once, the GPU's rate for them (kSplitKL2Gbps) is the limit instead.
constexpr double kL2BytesPerClockPerSm = 64;
// sm90 split-K's serial mode (more units than the grid's CTAs): a wave's writers store their
// partial tiles at once, and the last wave's reducers each load split_k - 1 of them, at the rate
// traced for 128 CTAs moving partial sums at once, after waiting for a tile's slowest split.
constexpr double kSplitKL2Gbps = 3000;
constexpr double kSplitKSkewUs = 2.0;
// sm90 split-K reduced distributed, per SM: the rates at which one SM moves its partial sums out
// and its peers' in (bulk copies or each thread's 16-byte accesses), and the hand-offs around
// them: staging, the flag's GPU-scope release, the slowest split and the polls, the stripe's sum.
// The rates are the SM's, not the GPU's: a split publishes in the same time whether 32 or 128
// CTAs publish (traced; bench/NOTES.md, "Limits found on the H200": 512^2 x 32768).
constexpr double kSplitKBulkStoreGbpsPerSm = 37;
constexpr double kSplitKBulkLoadGbpsPerSm = 48;
constexpr double kSplitKThreadStoreGbpsPerSm = 24;
constexpr double kSplitKThreadLoadGbpsPerSm = 35;
constexpr double kSplitKStagingUs = 0.55;
constexpr double kSplitKReleaseUs = 0.65;
constexpr double kSplitKHandoffUs = 1.5;
constexpr double kSplitKBulkSumUs = 0.55;
constexpr double kSplitKThreadSumUs = 1.3;
// sm90 cluster split-K: what one SM reads from its cluster peers' shared memory per clock, and
// the cost of one cluster barrier (two per unit). Leads, not measurements.
constexpr double kDsmemBytesPerClockPerSm = 32;
constexpr double kClusterBarrierUs = 0.3;

// sm90 stream-K (traced): a CTA's pieces run slower per k-tile than whole units (CTAs sharing an
// operand block reach it at different times), and a tile's owner adds a fix-up to its epilogue
// (its peers' partial tiles bulk-loaded, scaled by the partial tile's bytes), plus a hand-off per
// peer beyond the first (a flag's release and acquire, as split-K's exchange pays; fitted to 640
// stream-K measurements of 40 shapes off every suite, where tiles cut into 4-16 pieces ran
// 1.6-1.7x an estimate without it: bench/NOTES.md, "The GEMM model and its calibration").
constexpr double kStreamKPieceFactor = 1.1;
constexpr double kStreamKFixupUsPer128KB = 2.5;
constexpr double kStreamKHandoffUs = 1.25;

// sm90: the shortest time a CTA's ring takes per stage, whatever its bytes: one producer/consumer
// round trip (empty barrier, expect_tx, TMA issue, full barrier, wgmma, release). Traced at
// decode steps, where it is why stages several atoms deep stream faster.
constexpr double kSm90StagePeriodUs = 0.18;
// sm90 without warp specialization: consumer 0's first thread issues each stage's loads right
// after its warpgroup's release, so the stage's round trip also holds those TMA issues (per box)
// and, with two consumers, the wait for the other's release; where the round trip stays hidden
// the main loop keeps kSm90InlineLoadsFactor of the warp-specialized rate. In the model's frame
// (divided by the clock gain with the rest of the compute term); bench/NOTES.md, "sm90 GEMM
// schedules".
constexpr double kSm90InlineLoadsFactor = 0.985;
constexpr double kSm90InlineIssueUsPerBox = 0.09;
constexpr double kSm90InlineWaitUs = 0.16;
// sm90 with a copied operand (sm90_mn_copy_bytes): the producer warpgroup's 4- and 8-byte
// cp.async (through L1) bring about 11 bytes a clock into an SM, whatever their width and the
// stage's depth, and a unit's k-tiles take at least that (fitted to H100 tunes of four deep-K nn
// shapes: units of one to three copied atoms a stage, 0.25 to 2.1 MB a unit, ran 18-23 GB/s an
// SM where the copies bound them; bench/NOTES.md, "sm90 GEMM schedules").
constexpr double kSm90CopiedBytesPerClock = 11;

// The bytes a stage of `c` copies: its copied operand's 64-column atoms within the caller's N
// (the kernel's N, or swapped its M), each tile_k rows of 128 bytes; 0 without a copied operand.
double sm90_copied_stage_bytes(const GemmProblem& p, const GemmConfig& c) {
  if (sm90_mn_copy_bytes(p, c) == 0) return 0.0;
  const std::int64_t tile = c.swap_ab ? c.tile_m : c.tile_n;
  const std::int64_t atoms = std::min(tile, ceil_div(p.n, 64) * 64) / 64;
  return double(atoms) * c.tile_k * 128.0;
}

// The shortest time per stage of `c`'s ring (above).
double sm90_stage_period_us(const GemmProblem& p, const GemmConfig& c) {
  if (c.warp_specialized) return kSm90StagePeriodUs;
  // A K-major operand's box a 64-deep swizzle atom along K, an M- or N-major one's a 64-column
  // atom of the stage's whole depth.
  const int atoms = c.tile_k / 64;
  const int boxes = (kernel_a_k_major(p, c) ? atoms : c.tile_m / 64) +
                    (kernel_b_k_major(p, c) ? atoms : c.tile_n / 64);
  return kSm90StagePeriodUs + boxes * kSm90InlineIssueUsPerBox +
         (c.consumers > 1 ? kSm90InlineWaitUs : 0.0);
}

// sm90: a shallow ring exposes TMA latency between k-tiles.
double sm90_pipelining(const GemmConfig& c) {
  return c.stages >= 4 ? 1.0 : c.stages == 3 ? 0.97 : 0.9;
}

// sm80 with an operand whose rows are not 16-byte aligned (A: K % 8 != 0; B: K % 8 != 0 for nt,
// N % 8 != 0 for nn): no cp.async for it; its elements are loaded one a lane (a warp on 32
// consecutive ones) and stored to shared memory 2 bytes at a time. A CTA moves about 9 such
// elements a microsecond per thread, side by side with the SM's other CTAs, whether lanes read
// consecutive elements or elements 16 bytes apart (fitted in bench/NOTES.md, "The GEMM model and
// its calibration"), and its k-tiles take at least that; an aligned operand beside it goes by
// cp.async and costs nothing here.
constexpr double kSm80ElementLoadsPerUsPerThread = 9;

// The sm80 family: waves of resident CTAs, each computing its padded tile over its K slice at
// the SM's share of the mma.sync rate, scaled by shared-memory feed, latency hiding and pipelining.
double sm80_compute_us(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& d,
                       GemmEstimate& e) {
  e.waves = wave_stats(e.num_ctas, d.num_sms, e.occupancy.ctas_per_sm);
  // mma rate the warp tile sustains: each k16 step reads (wm + wn) x 16 elements of shared
  // memory per warp for wm x wn x 16 multiply-adds.
  const double peak_flops = d.mma_sync_tflops * 1e12;
  const double flops_per_clock_sm = peak_flops / (double(d.num_sms) * d.sm_clock_mhz * 1e6);
  const double flops_per_smem_byte =
      double(c.warp_m) * c.warp_n / (double(c.warp_m + c.warp_n) * size_bytes(p.in_dtype));
  e.mma_efficiency =
      std::min(1.0, kSmemBytesPerClockPerSm * flops_per_smem_byte / flops_per_clock_sm);
  // Too few warps per SM cannot hide the mma and ldmatrix latencies.
  const int warps_per_sm = e.occupancy.ctas_per_sm * c.num_warps();
  const double latency_hiding = std::min(1.0, 0.55 + 0.075 * warps_per_sm);
  // A shallow pipeline exposes global-memory latency between k-tiles.
  const double pipelining = c.stages >= 4 ? 1.0 : c.stages == 3 ? 0.95 : 0.85;

  // Compute: each wave runs ctas_per_sm CTAs per SM side by side, so a wave lasts
  // ctas_per_sm CTA-times; a CTA computes a padded tile over its K slice.
  // One split's K, whole k-tiles (= K padded to tile_k without split-K).
  const std::int64_t k_padded = k_per_split(p, c);
  const double cta_flops =
      2.0 * c.tile_m * c.tile_n * double(k_padded + kPipelineFillTiles * c.tile_k);
  const double sm_flops_per_s =
      peak_flops / d.num_sms * e.mma_efficiency * latency_hiding * pipelining;
  double wave_s = e.occupancy.ctas_per_sm * cta_flops / sm_flops_per_s;
  if (!p.vector_aligned()) {
    const double k_tiles = double(k_padded / c.tile_k);
    const double element_rows =
        (p.a_vector_aligned() ? 0 : c.tile_m) + (p.b_vector_aligned() ? 0 : c.tile_n);
    wave_s = std::max(wave_s, k_tiles * element_rows * c.tile_k /
                                  (kSm80ElementLoadsPerUsPerThread * c.num_threads()) * 1e-6);
  }
  return double(e.waves.waves) * wave_s * 1e6;
}

// The sm90 family: persistent CTAs, one per SM, each working through ceil(units / SMs) output
// tiles (times K splits) back to back. A unit costs its padded tile over its K slice plus one
// k-tile of pipeline fill at the SM's share of the wgmma rate, then its epilogue: the consumers
// store the tile directly (at kSm90DirectStoreGbpsPerSm; swap-AB's transposed stores at the SM's
// share of L2 bandwidth) while the tensor cores wait, or stage it for the TMA stores.
// Split-K (reduced in the kernel): a unit's epilogue is instead the FP32 store of its partial
// tile (a wave's writers storing at once, at kSplitKL2Gbps), and the last wave's reducers then
// load split_k - 1 partial tiles each and store C: that tail is e.reduce_us, on the critical path
// after the last wave (its writers finish in the same wave or earlier).
// When every unit has a CTA (cluster) of its own, the kernel reduces distributed instead: each
// unit stores its partial tile, then loads its stripe of every split's partials (one tile, less
// its own stripe where bulk copies move them) and stores its stripe of C directly, each at its
// SM's measured rates for those bytes, plus the hand-offs between them (the flag's release, the
// tile's slowest split, the polls).
// Stream-K: the whole waves, then every SM's share of the remaining units' k-tiles, and the
// fix-up of the tiles cut between SMs (partial tiles stored and loaded at one SM's L2 rate).
// Cluster split-K (cluster_k): a wave is num_sms / S tiles, each unit's tail stages its partial
// tile in shared memory, reads (S - 1) / S of one from its peers over distributed shared memory
// and stores its stripe of C, between two cluster barriers; no L2 traffic but the stripe.
// Those tails, like split-K's, are e.reduce_us, after the larger of compute and memory: no
// operand streams while they run, which at a decode step's memory floor decides the ranking.
double sm90_compute_us(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& d,
                       GemmEstimate& e) {
  // Clusters of 2 take two SMs per cluster unit (a pair of tiles), so a wave is num_sms / 2 of
  // them and lasts one unit time, like num_sms single tiles.
  const int size = cluster_size(c);
  e.waves = size > 1 ? wave_stats(cluster_units(p, c), d.num_sms / size, 1)
                     : wave_stats(work_units(p, c), d.num_sms, 1);
  e.mma_efficiency =
      (c.consumers == 2 ? kWgmmaEfficiencyTwoConsumers : kWgmmaEfficiencyOneConsumer) *
      sm90_tile_factor(c) * sm90_pipelining(c);
  if (!c.warp_specialized) e.mma_efficiency *= kSm90InlineLoadsFactor;
  if (c.cluster_k > 1) e.mma_efficiency /= kSm90ClusterSplitFactor;
  if (ungrouped_order_matters(p, c, e, d)) e.mma_efficiency *= kSm90UngroupedFactor;
  // One split's K, whole k-tiles (= K padded to tile_k without split-K).
  const std::int64_t k_padded = k_per_split(p, c);
  const double unit_flops =
      2.0 * c.tile_m * c.tile_n * double(k_padded + kPipelineFillTiles * c.tile_k);
  const double sm_flops_per_s = d.wgmma_tflops * 1e12 / d.num_sms * e.mma_efficiency;
  const double l2_share_per_sm = d.l2_gbps * 1e9 / d.num_sms;
  const double clock_hz = d.sm_clock_mhz * 1e6;
  const double tile_out_bytes = double(c.tile_m) * c.tile_n * size_bytes(p.out_dtype);
  const double epilogue_s =
      c.epilogue > 0 ? tile_out_bytes / (kSmemBytesPerClockPerSm * clock_hz) +
                           double(c.tile_n / sm90_slab_columns(p, c)) * kSm90SlabBarrierUs * 1e-6
                     : tile_out_bytes / l2_share_per_sm;
  // A unit's own tile stored directly after its main loop (not split-K's reducers, whose direct
  // and TMA stores measured alike), in the kernel's orientation (swap-AB's transposed stores
  // measure as the L2 share has them).
  const double tile_epilogue_s = c.epilogue == 0 && !c.swap_ab
                                     ? tile_out_bytes / (kSm90DirectStoreGbpsPerSm * 1e9)
                                     : epilogue_s;
  const double stages_s = double(k_padded / c.tile_k) * sm90_stage_period_us(p, c) * 1e-6;
  const double copies_s = double(k_padded / c.tile_k) * sm90_copied_stage_bytes(p, c) /
                          (kSm90CopiedBytesPerClock * clock_hz);
  const double unit_s = std::max({unit_flops / sm_flops_per_s, stages_s, copies_s});
  const double partial_tile_bytes = double(sm90_partial_tile_bytes(c));
  if (c.split_k == 1) {
    const StreamKRegion sk = stream_k_region(p, c, d.num_sms);
    if (sk.units == 0) return double(e.waves.waves) * (unit_s + tile_epilogue_s) * 1e6;
    // Stream-K: the whole units' waves, then each CTA's sk.iters k-tiles of the rest, slower
    // than whole units, and a tile's owner waits for and adds about k_tiles / sk.iters other
    // pieces' partial tiles before its epilogue.
    const double tile_count_k = double(k_tiles(p, c));
    const double whole_waves = double(work_units(p, c) - sk.units) / d.num_sms;
    const double others = std::max(1.0, tile_count_k / double(sk.iters));
    // The fix-up follows the owners' last pieces: no operand streams beside it (reduce_us).
    e.reduce_us = others * partial_tile_bytes / (128.0 * 1024.0) * kStreamKFixupUsPer128KB +
                  (others - 1.0) * kStreamKHandoffUs;
    return (whole_waves * (unit_s + tile_epilogue_s) +
            double(sk.iters) / tile_count_k * unit_s * kStreamKPieceFactor + tile_epilogue_s) *
           1e6;
  }
  if (c.cluster_k > 1) {
    // Each unit's exchange holds its CTA's ring (barrier C) and tensor cores: no operand streams
    // beside it, so the waves' exchanges add to the larger of compute and memory (reduce_us).
    const double others = double(c.split_k - 1) / c.split_k;
    const double tail_s = partial_tile_bytes / (kSmemBytesPerClockPerSm * clock_hz) +
                          others * partial_tile_bytes / (kDsmemBytesPerClockPerSm * clock_hz) +
                          tile_out_bytes / c.split_k / l2_share_per_sm +
                          2 * kClusterBarrierUs * 1e-6;
    e.reduce_us = double(e.waves.waves) * tail_s * 1e6;
    return double(e.waves.waves) * unit_s * 1e6;
  }
  const std::int64_t unit_slots = std::max(1, d.num_sms / cluster_size(c));
  if (cluster_units(p, c) <= unit_slots) {
    // Every unit stores its whole partial tile, then loads its stripe of every split's at its
    // SM's rates (one unit an SM): (S - 1) / S of a tile by bulk copies, whose sum takes the
    // unit's own stripe from its registers, a whole tile from L2 otherwise. Published in the
    // unit's time, then, after the hand-off to its peers, loaded, summed and stored as its
    // stripe of C in the tail.
    const bool bulk = sm90_bulk_partials(p, c);
    const double loaded = (bulk ? double(c.split_k - 1) / c.split_k : 1.0) * partial_tile_bytes;
    const double publish_s =
        partial_tile_bytes /
            ((bulk ? kSplitKBulkStoreGbpsPerSm : kSplitKThreadStoreGbpsPerSm) * 1e9) +
        ((bulk ? kSplitKStagingUs : 0.0) + kSplitKReleaseUs) * 1e-6;
    const double load_s =
        loaded / ((bulk ? kSplitKBulkLoadGbpsPerSm : kSplitKThreadLoadGbpsPerSm) * 1e9);
    const double stripe_s = tile_out_bytes / c.split_k / l2_share_per_sm;
    e.reduce_us = (load_s + stripe_s) * 1e6 + kSplitKHandoffUs +
                  (bulk ? kSplitKBulkSumUs : kSplitKThreadSumUs);
    return double(e.waves.waves) * (unit_s + publish_s) * 1e6;
  }
  // Serial: a wave's writers store their tiles at once; the last wave's reducers each load S - 1
  // tiles, at one SM's rate or, all of them together, the GPU's.
  const double wave_units = double(std::min<std::int64_t>(work_units(p, c), unit_slots));
  const double store_s = partial_tile_bytes * wave_units / (kSplitKL2Gbps * 1e9);
  const double reducer_bytes = double(c.split_k - 1) * partial_tile_bytes;
  const double reducer_load_s =
      std::max(reducer_bytes / (kL2BytesPerClockPerSm * clock_hz),
               reducer_bytes * double(tiles_m(p, c) * tiles_n(p, c)) / (kSplitKL2Gbps * 1e9));
  e.reduce_us = (reducer_load_s + epilogue_s) * 1e6 + kSplitKSkewUs;
  return double(e.waves.waves) * (unit_s + store_s) * 1e6;
}

}  // namespace

double dram_ramp_us(const GemmProblem& p, const DeviceDesc& d) {
  const double peak_flops = std::max(d.wgmma_tflops, d.mma_sync_tflops) * 1e12;
  const bool memory_bound = p.min_bytes() / (d.dram_gbps * 1e9) > p.flops() / peak_flops;
  return memory_bound ? kDramRampUs : 0.0;
}

double sm90_clock_gain(double busy_us) {
  if (busy_us <= kSm90ShortRunUs) return kSm90ShortRunClockGain;
  if (busy_us >= kSm90LongRunUs) return 1.0;
  const double t = std::log(kSm90LongRunUs / busy_us) / std::log(kSm90LongRunUs / kSm90ShortRunUs);
  return 1.0 + (kSm90ShortRunClockGain - 1.0) * t;
}

GemmEstimate estimate_tiles_and_occupancy(const GemmProblem& p, const GemmConfig& c,
                                          const DeviceDesc& d, int regs) {
  GemmEstimate e;
  e.tiles_m = tiles_m(p, c);
  e.tiles_n = tiles_n(p, c);
  e.num_ctas = e.tiles_m * e.tiles_n * c.split_k;
  e.threads = c.num_threads();
  e.regs_per_thread = regs > 0 ? regs : estimated_registers(c);
  e.smem_bytes = smem_bytes(p, c);
  e.occupancy = occupancy(e.threads, e.regs_per_thread, e.smem_bytes, d);
  e.tile_efficiency =
      double(p.m) * double(p.n) / (double(e.tiles_m * c.tile_m) * double(e.tiles_n * c.tile_n));
  return e;
}

GemmEstimate estimate(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& d, int regs) {
  if (c.family == GemmFamily::kSmallM) return estimate_small_m(p, c, d, regs);
  GemmEstimate e = estimate_tiles_and_occupancy(p, c, d, regs);
  if (c.family == GemmFamily::kSm90) {
    e.num_ctas = plan_launch(p, c, d.num_sms).main.num_ctas();
    // The power limit's clock (sm90_clock_gain) divides the whole compute term, the stage-period
    // floor, epilogues and split-K's publish included: scaling the wgmma rate alone mis-ranks
    // deep-and-few against shallow-and-many rings of the same bytes, which the model cannot
    // otherwise tell apart.
    e.compute_us = sm90_compute_us(p, c, d, e);
    e.compute_us /= sm90_clock_gain(e.compute_us);
  } else {
    e.compute_us = sm80_compute_us(p, c, d, e);
  }

  // Memory: unique bytes at DRAM bandwidth, and every CTA's operand reads at L2 bandwidth;
  // without a grouped raster, operands larger than L2 are partly re-read from DRAM.
  const double in = size_bytes(p.in_dtype);
  const std::int64_t k_padded = k_per_split(p, c);
  // sm90 split-K adds its partial tiles, written and read back once each through L2.
  // (S - 1) tiles' worth in both reduction modes (the workspace holds S slots per tile).
  const double partial_traffic = c.family == GemmFamily::kSm90 && c.split_k > 1
                                     ? 2.0 * double(c.split_k - 1) * double(e.tiles_m * e.tiles_n) *
                                           double(sm90_partial_tile_bytes(c))
                                     : 0.0;
  const double cluster_factor = c.family == GemmFamily::kSm90 && (c.cluster > 1 || c.cluster_n > 1)
                                    ? kSm90ClusterL2Factor
                                    : 1.0;
  const double l2_reads = cluster_factor * double(work_units(p, c)) * double(c.tile_m + c.tile_n) *
                              double(k_padded) * in +
                          partial_traffic;
  const double dram = p.min_bytes() + ungrouped_reread_bytes(p, c, e, d);
  // A CTA keeps up to `stages` k-tiles of loads outstanding, of which the share DRAM serves
  // (unique bytes over all loads) keeps DRAM busy; few or shallow CTAs leave it idle between
  // requests (a decode shape's 64 CTAs, not a full-size GEMM's).
  const double resident_ctas = std::min<double>(
      double(e.num_ctas), double(std::max(e.occupancy.ctas_per_sm, 1)) * d.num_sms);
  const double inflight = resident_ctas * c.stages * double(c.tile_m + c.tile_n) * c.tile_k * in;
  const double dram_share = l2_reads > 0 ? std::min(1.0, dram / l2_reads) : 1.0;
  const double dram_bw = d.dram_gbps * 1e9;
  const double stream_factor =
      (swapped_sharers_apart(c, e) ? kSm90SwappedGroupedStreamFactor : 1.0) *
      (stream_k_pieces_only(p, c, d) ? kSm90StreamKPiecesOnlyStreamFactor : 1.0);
  e.memory_us = std::max(stream_factor * dram / dram_rate(inflight * dram_share, dram_bw),
                         l2_reads / (d.l2_gbps * 1e9)) *
                1e6;
  e.ramp_us = dram_ramp_us(p, d);
  e.memory_us += e.ramp_us;

  // sm80 split-K: the reduce kernel reads the slices back and writes C, in a second launch
  // (sm90's in-kernel reduction set reduce_us above).
  if (c.split_k > 1 && c.family != GemmFamily::kSm90) {
    const double ws = double(splitk_partial_bytes(p, c));
    e.reduce_us =
        (2.0 * ws + double(p.m) * p.n * size_bytes(p.out_dtype)) / dram_bw * 1e6 + kLaunchUs;
  }
  // sm90 on rows TMA cannot address: each copy reads its operand and writes the padded rows, in
  // a launch of its own before the main kernel's.
  for (const GemmPaddedOperand& o : sm90_padded_operands(p, c, d.num_sms))
    e.pad_us +=
        (double(o.rows) * o.cols * in + double(o.bytes(p))) / (kPadCopyOfDram * dram_bw) * 1e6 +
        kLaunchUs;
  finish_estimate(p, e, kLaunchUs + (c.family == GemmFamily::kSm90 ? kSm90PrologueUs : 0.0));
  return e;
}

void finish_estimate(const GemmProblem& p, GemmEstimate& e, double launch_us) {
  e.overlap_us = kOverlapLoss * std::min(e.compute_us, e.memory_us);
  e.launch_us = launch_us;
  e.predicted_us =
      std::max(e.compute_us, e.memory_us) + e.overlap_us + e.reduce_us + e.pad_us + launch_us;
  e.predicted_tflops = p.flops() / (e.predicted_us * 1e-6) / 1e12;
}

std::vector<RankedConfig> rank_by_model(const GemmProblem& p,
                                        const std::vector<GemmConfig>& configs,
                                        const DeviceDesc& d) {
  return rank_by_estimate(configs, [&](const GemmConfig& c) { return estimate(p, c, d); });
}

}  // namespace kt
