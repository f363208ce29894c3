// The sm90 GEMM's partial sums (the split-K and stream-K schedules): a consumer's accumulators in
// fragment order, stored, staged, bulk-copied and added, and the distributed reduction of a
// stripe of a tile's columns across its splits.
#pragma once

#include "kerntune/common/ptx_sm90.cuh"
#include "kerntune/gemm/gemm_params.h"
#include "kerntune/gemm/sm90_store.cuh"
#include "kerntune/gemm/sm90_traits.cuh"
#include "kerntune/gemm/sm90_work_units.cuh"

namespace kt {
namespace sm90 {

// A consumer's accumulators as partial sums in fragment order: float4 q of thread t
// (accumulators 4q .. 4q + 3 over the kMI x kAccs registers) is float4 q * 128 + t of the
// layout, so each warp's store (and a reducer's load) moves 512 contiguous bytes. store(i, a, b,
// c, d) writes float4 i.
// The float4 of `thread` in quad q of m64 tile mi, in that layout.
template <int kAccs>
__device__ __forceinline__ int partial_float4(int mi, int q, int thread) {
  return (mi * (kAccs / 4) + q) * 128 + thread;
}

template <int kMI, int kAccs, typename Store>
__device__ __forceinline__ void write_partials(Store store, const float (&acc)[kMI][kAccs],
                                               int thread) {
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int q = 0; q < kAccs / 4; ++q)
      store(partial_float4<kAccs>(mi, q, thread), acc[mi][4 * q], acc[mi][4 * q + 1],
            acc[mi][4 * q + 2], acc[mi][4 * q + 3]);
}

// write_partials to a workspace slot in global memory (split-K through L2).
template <int kMI, int kAccs>
__device__ __forceinline__ void store_partials(float* slot, const float (&acc)[kMI][kAccs],
                                               int thread) {
  const auto store = [slot](int i, float a, float b, float c, float d) {
    st_global_v4f32(slot + i * 4, a, b, c, d);
  };
  write_partials(store, acc, thread);
}

// 16-byte L2 loads the split-K reductions issue before using the first (one round trip per batch,
// not per load); fewer beside 128 accumulators per thread (kAccumulators: all m64 tiles of a
// consumer), which leave fewer registers free.
template <int kAccumulators>
__host__ __device__ constexpr int reduce_batch() {
  return kAccumulators >= 128 ? 4 : 8;
}

// Loads sum_quads keeps in flight: reduce_batch's beside fewer than 128 accumulators a thread;
// beside 128, two, as every split's partial sums are loaded (the unit's own too) and four more
// temporaries made ptxas spill the tiles with a TMA-store epilogue.
template <int kAccumulators>
__host__ __device__ constexpr int sum_batch() {
  return kAccumulators >= 128 ? 2 : reduce_batch<kAccumulators>();
}

// acc += the partial sums of `slot` (store_partials' layout), reduce_batch() float4 loads in
// flight at a time.
template <int kMI, int kAccs>
__device__ __forceinline__ void add_partials(const float* slot, float (&acc)[kMI][kAccs],
                                             int thread) {
  constexpr int kQuads = kAccs / 4;
  constexpr int kBatch = reduce_batch<kMI * kAccs>();
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int q0 = 0; q0 < kQuads; q0 += kBatch) {
      float t[kBatch][4];
#pragma unroll
      for (int i = 0; i < kBatch; ++i)
        if (q0 + i < kQuads)
          ld_global_cg_v4f32(slot + ((mi * kQuads + q0 + i) * 128 + thread) * 4, t[i][0], t[i][1],
                             t[i][2], t[i][3]);
#pragma unroll
      for (int i = 0; i < kBatch; ++i)
        if (q0 + i < kQuads)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mi][4 * (q0 + i) + e] += t[i][e];
    }
}

// acc += the partial sums staged at shared address `staged` (store_partials' layout, e.g. by a
// bulk copy of a workspace slot).
template <int kMI, int kAccs>
__device__ __forceinline__ void add_staged_partials(unsigned int staged, float (&acc)[kMI][kAccs],
                                                    int thread) {
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int q = 0; q < kAccs / 4; ++q) {
      float t[4];
      ld_shared_v4f32(staged + ((mi * (kAccs / 4) + q) * 128 + thread) * 16, t[0], t[1], t[2],
                      t[3]);
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][4 * q + e] += t[e];
    }
}

// Cluster split-K: write_partials to the consumer's shared buffer at address `base`.
template <int kMI, int kAccs>
__device__ __forceinline__ void stage_partials(unsigned int base, const float (&acc)[kMI][kAccs],
                                               int thread) {
  const auto store = [base](int i, float a, float b, float c, float d) {
    st_shared_v4f32(base + i * 16, a, b, c, d);
  };
  write_partials(store, acc, thread);
}

// ---- distributed split-K by bulk copies --------------------------------------------------------

// Bytes of one accumulator quad of a consumer in store_partials' layout: a float4 per thread.
constexpr int kQuadBytes = 128 * 16;

// The named barrier over the consumers' threads around the ring's reuse for partial sums (1 and
// 2 are the consumers' own, 3 cluster split-K's).
constexpr unsigned int kPartialsBarrier = 4;

// Shared address of a float4 of split z's quad (mi, q) among a tile's stripes at `stripes`: one
// slot per split in split order, each kMI runs of the stripe's `width` quads from q_begin.
// `base` = stripes - q_begin * kQuadBytes + 16 * (the thread's float4 in a quad).
template <int kMI>
__device__ __forceinline__ unsigned int stripe_address(unsigned int base, int z, int mi, int q,
                                                       int width) {
  return base + ((z * kMI + mi) * width + q) * kQuadBytes;
}

// Loads the stripe, quads [q_begin, q_end) of each m64 tile, of every other split's slot
// (split z's at slot0 + z * split_stride) to `stripes` in stripe_address's layout, completing on
// `bar` (which the caller has armed with expect_tx of all of it). Slot `split` is left to
// stage_own_stripe.
template <int kMI, int kQuads>
__device__ __forceinline__ void bulk_load_stripes(unsigned int stripes, const float* slot0,
                                                  long long split_stride, int splits, int split,
                                                  int q_begin, int q_end, unsigned int bar) {
  const int width = q_end - q_begin;
#pragma unroll 1
  for (int z = 0; z < splits; ++z) {
    if (z == split) continue;
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
      bulk_load(stripe_address<kMI>(stripes - q_begin * kQuadBytes, z, mi, q_begin, width),
                slot0 + z * split_stride + (mi * kQuads + q_begin) * (kQuadBytes / 4),
                width * kQuadBytes, bar);
  }
}

// Writes this thread's float4 of each quad of its own stripe, [q_begin, q_end) of each m64 tile,
// from its accumulators to slot `split` of stripe_address's layout (`base` as there), beside
// the slots bulk_load_stripes fills. The predicate is per unrolled quad: no register array is
// indexed at run time.
template <int kMI, int kAccs>
__device__ __forceinline__ void stage_own_stripe(unsigned int base, int split, int q_begin,
                                                 int q_end, const float (&acc)[kMI][kAccs]) {
  const int width = q_end - q_begin;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int q = 0; q < kAccs / 4; ++q)
      if (q >= q_begin && q < q_end)
        st_shared_v4f32(stripe_address<kMI>(base, split, mi, q, width), acc[mi][4 * q],
                        acc[mi][4 * q + 1], acc[mi][4 * q + 2], acc[mi][4 * q + 3]);
}

// Distributed split-K: the accumulator quads [begin, end) of each m64 tile (quad q = n8 column
// block q of the fragment layout, so the slice is a stripe of columns) that split `split` of
// `splits` reduces and stores; balanced to within one quad, empty for some splits when there are
// more splits than quads.
__device__ __forceinline__ void slice_quads(int split, int splits, int quads, int& begin,
                                            int& end) {
  begin = split * quads / splits;
  end = (split + 1) * quads / splits;
}

// Where a thread stores its elements of a stripe of C: c0, its first element (row row0, column
// col0 of the kernel's product, at element<kSwapAB>); rows_left = m - row0, cols_left = n - col0;
// aligned: pairs go out as one access (pairs_aligned).
template <typename T>
struct StripeOut {
  T* c0;
  long long ldc;
  int rows_left;
  int cols_left;
  bool aligned;
};

// The StripeOut of consumer thread c in unit w's tile.
template <typename K>
__device__ __forceinline__ StripeOut<typename K::TOut> stripe_out(const GemmParams& p,
                                                                  const WorkUnit& w,
                                                                  const ConsumerThread& c) {
  const int row0 =
      w.tile_m * K::kTileM + c.consumer * (K::kTileM / K::kConsumers) + 16 * c.warp + c.lane / 4;
  const int col0 = w.tile_n * K::kTileN + 2 * (c.lane % 4);
  typename K::TOut* const c_out = static_cast<typename K::TOut*>(p.c);
  return {element<K::kSwapAB>(c_out, p.ldc, row0, col0), p.ldc, p.m - row0, p.n - col0,
          pairs_aligned(c_out, p.ldc)};
}

// Stores a thread's sums s of quad q of m64 tile mi: its rows 64 mi and 64 mi + 8, columns 8 q
// and 8 q + 1 from its first element.
template <bool kSwapAB, typename T>
__device__ __forceinline__ void store_quad(const StripeOut<T>& out, int mi, int q,
                                           const float (&s)[4]) {
  T* const c = element<kSwapAB>(out.c0, out.ldc, mi * 64, 0);
  if (mi * 64 < out.rows_left)
    store_pair<kSwapAB>(c, out.ldc, q * 8, out.cols_left, s[0], s[1], out.aligned);
  if (mi * 64 + 8 < out.rows_left)
    store_pair<kSwapAB>(element<kSwapAB>(c, out.ldc, 8, 0), out.ldc, q * 8, out.cols_left, s[2],
                        s[3], out.aligned);
}

// The reduction of every split-K mode that sums a stripe (distributed from L2 or by bulk
// copies, and cluster split-K): sums quads [q_begin, q_end) of each m64 tile over every split's
// partial sums and stores them as C. load(z, mi, q, t): this thread's float4 of quad q of m64
// tile mi of split z's partials (from L2, shared memory, or a cluster peer's). The order is the
// serial reducer's, p(S-1) + p0 + p1 + .. + p(S-2) (S = splits), so every mode gives bitwise the
// same C. The m64 tiles, quads and splits are run-time loops (every split is loaded, this unit's
// own too, so no selection between registers and loads): NVRTC compiles this in a fraction of
// the time that quads unrolled under a predicate took. Per quad, kBatch loads go out before the
// first add: one round trip per batch rather than one per split.
template <bool kSwapAB, int kMI, int kBatch, typename T, typename Load>
__device__ __forceinline__ void sum_quads(Load load, int splits, int q_begin, int q_end,
                                          const StripeOut<T>& out) {
#pragma unroll 1
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll 1
    for (int q = q_begin; q < q_end; ++q) {
      float s[4];
      load(splits - 1, mi, q, s);
#pragma unroll 1
      for (int z0 = 0; z0 < splits - 1; z0 += kBatch) {
        float t[kBatch][4];
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
          if (z0 + i < splits - 1) load(z0 + i, mi, q, t[i]);
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
          if (z0 + i < splits - 1)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[e] += t[i][e];
      }
      store_quad<kSwapAB>(out, mi, q, s);
    }
  }
}

}  // namespace sm90
}  // namespace kt
