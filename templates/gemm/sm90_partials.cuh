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
// c, d) writes float4 i; the quads [skip_begin, skip_end) of each m64 tile are left out (none by
// default). The predicate is per unrolled quad: no register array is indexed at run time.
template <int kMI, int kAccs, typename Store>
__device__ __forceinline__ void write_partials(Store store, const float (&acc)[kMI][kAccs],
                                               int thread, int skip_begin, int skip_end) {
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int q = 0; q < kAccs / 4; ++q)
      if (q < skip_begin || q >= skip_end)
        store((mi * (kAccs / 4) + q) * 128 + thread, acc[mi][4 * q], acc[mi][4 * q + 1],
              acc[mi][4 * q + 2], acc[mi][4 * q + 3]);
}

// write_partials to a workspace slot in global memory (split-K through L2).
template <int kMI, int kAccs>
__device__ __forceinline__ void store_partials(float* slot, const float (&acc)[kMI][kAccs],
                                               int thread, int skip_begin = 0, int skip_end = 0) {
  const auto store = [slot](int i, float a, float b, float c, float d) {
    st_global_v4f32(slot + i * 4, a, b, c, d);
  };
  write_partials(store, acc, thread, skip_begin, skip_end);
}

// 16-byte L2 loads the split-K reductions issue before using the first (one round trip per batch,
// not per load); fewer beside 128 accumulators per thread (kAccumulators: all m64 tiles of a
// consumer), which leave fewer registers free.
template <int kAccumulators>
__host__ __device__ constexpr int reduce_batch() {
  return kAccumulators >= 128 ? 4 : 8;
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
  write_partials(store, acc, thread, 0, 0);
}

// ---- distributed split-K by bulk copies --------------------------------------------------------

// Bytes of one accumulator quad of a consumer in store_partials' layout: a float4 per thread.
constexpr int kQuadBytes = 128 * 16;

// The named barrier over the consumers' threads around the ring's reuse for partial sums (1 and
// 2 are the consumers' own, 3 cluster split-K's).
constexpr unsigned int kPartialsBarrier = 4;

// Issues the bulk stores of a consumer's partial sums, staged in `staged` (stage_partials'
// layout, which is the slot's), to `slot`, leaving out the quads [skip_begin, skip_end) of each
// m64 tile: kMI + 1 contiguous runs at most. Joins the thread's current bulk group.
template <int kMI, int kQuads>
__device__ __forceinline__ void bulk_store_partials(float* slot, unsigned int staged,
                                                    int skip_begin, int skip_end) {
  int run_begin = 0;  // quads, over the kMI tiles in order
#pragma unroll
  for (int mi = 0; mi <= kMI; ++mi) {
    const int run_end = mi < kMI ? mi * kQuads + skip_begin : kMI * kQuads;
    if (run_end > run_begin)
      bulk_store(slot + run_begin * (kQuadBytes / 4), staged + run_begin * kQuadBytes,
                 (run_end - run_begin) * kQuadBytes);
    run_begin = mi * kQuads + skip_end;
  }
}

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

// x, which the compiler cannot see through (no value computed from it earlier is reused).
__device__ __forceinline__ int launder_u32(int x) {
  asm volatile("mov.b32 %0, %0;\n" : "+r"(x));
  return x;
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

// Distributed split-K from L2, and cluster split-K: sums quads [q_begin, q_end) of every split's
// partials and stores them as C. load(z, offset, t): this thread's float4 of split z's partials
// at float `offset` of store_partials' layout (from L2, or a cluster peer's shared memory);
// split `split` (this unit) is taken from `acc`. The order is the serial reducer's, p(S-1) + p0
// + p1 + .. + p(S-2) (S = splits), so every mode gives bitwise the same C: position j of the sum
// adds split order(j) = S - 1, 0, 1, .. S - 2. Per quad, the other splits' loads go out
// reduce_batch() at a time before the first is added, so a quad costs one round trip per batch
// rather than one per split; 4 sums and a batch of temporaries live at a time, not a second set
// of accumulators.
template <bool kSwapAB, typename T, int kMI, int kAccs, typename Load>
__device__ __forceinline__ void reduce_slice(Load load, int split, int splits, int q_begin,
                                             int q_end, const float (&acc)[kMI][kAccs],
                                             const StripeOut<T>& out) {
  constexpr int kQuads = kAccs / 4;
  constexpr int kBatch = reduce_batch<kMI * kAccs>();
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      if (q < q_begin || q >= q_end) continue;
      const int offset = (mi * kQuads + q) * 512;
      float s[4];
#pragma unroll 1
      for (int j0 = 0; j0 < splits; j0 += kBatch) {
        float t[kBatch][4];
#pragma unroll
        for (int i = 0; i < kBatch; ++i) {
          const int z = j0 + i == 0 ? splits - 1 : j0 + i - 1;
          if (j0 + i < splits && z != split) load(z, offset, t[i]);
        }
#pragma unroll
        for (int i = 0; i < kBatch; ++i) {
          const int j = j0 + i;
          if (j >= splits) break;
          const int z = j == 0 ? splits - 1 : j - 1;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float v = z == split ? acc[mi][4 * q + e] : t[i][e];
            s[e] = j == 0 ? v : s[e] + v;
          }
        }
      }
      store_quad<kSwapAB>(out, mi, q, s);
    }
  }
}

// Distributed split-K by bulk copies: sums quads [q_begin, q_end) of every split's stripe, all
// in shared memory in stripe_address's layout (`base` as there; this unit's own slot written by
// stage_own_stripe), in reduce_slice's order, p(S-1) + p0 + p1 + .. + p(S-2) (bitwise the same C
// as every other mode), and stores them as C. Every operand is a slot at a run-time offset, so
// the quads and the splits are run-time loops with no selection between registers and loads:
// about a third of reduce_slice's instructions, which on two warps a scheduler set the time of
// this phase. Per quad, kBatch loads go out before the first add.
template <bool kSwapAB, int kMI, int kBatch, typename T>
__device__ __forceinline__ void sum_stripe(unsigned int base, int splits, int q_begin, int q_end,
                                           const StripeOut<T>& out) {
  const int width = q_end - q_begin;
  const unsigned int slot_bytes = kMI * width * kQuadBytes;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll 1
    for (int q = q_begin; q < q_end; ++q) {
      const unsigned int first = stripe_address<kMI>(base, 0, mi, q, width);
      float s[4];
      ld_shared_v4f32(first + (splits - 1) * slot_bytes, s[0], s[1], s[2], s[3]);
#pragma unroll 1
      for (int z0 = 0; z0 < splits - 1; z0 += kBatch) {
        float t[kBatch][4];
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
          if (z0 + i < splits - 1)
            ld_shared_v4f32(first + (z0 + i) * slot_bytes, t[i][0], t[i][1], t[i][2], t[i][3]);
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
