// Device primitives of the sm_90a kernel families as inline PTX: mbarrier rings, TMA tile loads,
// shared-memory matrix descriptors for 128-byte swizzled tiles, warpgroup MMA (wgmma) with its
// fence/commit/wait, and setmaxnreg. sm_90a only (plain sm_90 rejects wgmma and setmaxnreg);
// no CUDA header, so NVRTC compiles it with no include path.
#pragma once

#include "kerntune/common/dtypes.cuh"
#include "kerntune/common/ptx_sm80.cuh"

namespace kt {

// ---- mbarrier -------------------------------------------------------------------------------

// Initializes the 8-byte barrier at shared address `bar` to expect `count` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(unsigned int bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Makes barrier initializations visible to the async proxy (TMA completions) and to the cluster
// before any thread uses them; follow it with a CTA barrier.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival on `bar` that also raises the phase's expected transaction count by `bytes`: the
// phase completes when every arrival is in and `bytes` have landed (TMA complete_tx).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned int bar, unsigned int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

// One arrival on `bar` (release semantics: this thread's prior accesses happen before the phase
// completes for its waiters).
__device__ __forceinline__ void mbarrier_arrive(unsigned int bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// One arrival on `bar` once every cp.async this thread issued before it has completed (its
// writes then visible to the threads that wait on the phase); .noinc: the arrival is one of the
// count `bar` was initialised with.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(unsigned int bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// Blocks until the phase of `bar` with parity `parity` (0 or 1) has completed (acquire). A fresh
// barrier is in phase 0, so waiting for parity 1 returns at once: "the phase before" counts as
// done.
__device__ __forceinline__ void mbarrier_wait(unsigned int bar, unsigned int parity) {
  unsigned int done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (done == 0);
}

// ---- clusters -------------------------------------------------------------------------------

// This CTA's rank in its cluster, the cluster's index in the grid (x) and the number of clusters.
__device__ __forceinline__ unsigned int cluster_ctarank() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned int cluster_id_x() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned int cluster_count_x() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster arrives (release) and waits (acquire): shared memory
// and barriers of the peers written before are visible after. Not .aligned, so threads of a
// warp may reach it apart.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release;\n"
      "barrier.cluster.wait.acquire;\n" ::
          : "memory");
}

// The shared::cluster address of the shared word at `addr` (this CTA's shared window) in the
// cluster's CTA `cta_rank`.
__device__ __forceinline__ unsigned int map_shared_rank(unsigned int addr, unsigned int cta_rank) {
  unsigned int r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(cta_rank));
  return r;
}

// 16 bytes of a cluster peer's shared memory (distributed shared memory), at an address from
// map_shared_rank. Ordered after the peer's stores by a cluster barrier between them.
__device__ __forceinline__ void ld_shared_cluster_v4f32(unsigned int addr, float& a, float& b,
                                                        float& c, float& d) {
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "r"(addr)
               : "memory");
}

// One arrival on the barrier at the same shared offset as `bar` in the cluster's CTA `cta_rank`
// (which may be this one). Default semantics (release at CTA scope), as for a local arrival: it
// only signals that this CTA is done reading a stage through wgmma (complete at wgmma_wait), and
// the waiter then writes that stage by TMA, so no generic-proxy data needs cluster-wide ordering.
// NOTE: never .release.cluster here (nor .acquire.cluster on the matching wait): ptxas (13.0,
// sm_90a) compiles a cluster-scope release to 4 more SASS instructions, among them two MEMBARs,
// and a cluster-scope acquire to an extra instruction after every successful try_wait. Issued by
// a consumer thread every k-tile, those fences sit on the wgmma issue path (2-CTA cluster configs
// ran ~30% slower than their 1-CTA twins with them).
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned int bar, unsigned int cta_rank) {
  asm volatile(
      "mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(map_shared_rank(bar, cta_rank))
      : "memory");
}

// ---- TMA ------------------------------------------------------------------------------------

// Starts fetching the tensor map at `map` (the generic address of a CUtensorMap in a
// `const __grid_constant__` parameter) into the TMA unit's descriptor cache, so the first copy
// through it does not wait for that fetch.
__device__ __forceinline__ void prefetch_tensor_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map))
               : "memory");
}

// Copies the box at element coordinates (x innermost, y) of the tensor map at `map` (the generic
// address of a CUtensorMap in a `const __grid_constant__` parameter) into shared address
// `dst` (aligned as the map's swizzle requires: 1024 bytes for 128B), completing `bytes` of the
// barrier `bar`'s transaction count. Out-of-bounds elements land as zeros but still count.
__device__ __forceinline__ void tma_load_2d(unsigned int dst, const void* map, int x, int y,
                                            unsigned int bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// tma_load_2d into the same shared offset `dst` of every CTA of the cluster whose bit is set in
// `cta_mask`, completing `bytes` on the barrier at offset `bar` of each of them.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned int dst, const void* map, int x,
                                                      int y, unsigned int bar,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar), "h"(cta_mask)
      : "memory");
}

// tma_load_2d for a 1D tensor map: the box starting at element x.
__device__ __forceinline__ void tma_load_1d(unsigned int dst, const void* map, int x,
                                            unsigned int bar) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2}], [%3];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(bar)
      : "memory");
}

// tma_load_2d for a 4D tensor map: the box at element coordinates (x innermost, y, z, w).
__device__ __forceinline__ void tma_load_4d(unsigned int dst, const void* map, int x, int y, int z,
                                            int w, unsigned int bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(z), "r"(w), "r"(bar)
      : "memory");
}

// Copies the shared-memory box at `src` (laid out as the map's swizzle says) to the tensor at
// element coordinates (x, y); elements outside the tensor are not written. Asynchronous: joins
// this thread's current bulk group (close it with bulk_commit_group).
__device__ __forceinline__ void tma_store_2d(const void* map, unsigned int src, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
          reinterpret_cast<unsigned long long>(map)),
      "r"(x), "r"(y), "r"(src)
      : "memory");
}

// tma_store_2d for a 4D tensor map, at element coordinates (x innermost, y, z, w).
__device__ __forceinline__ void tma_store_4d(const void* map, unsigned int src, int x, int y, int z,
                                             int w) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], "
      "[%5];\n" ::"l"(reinterpret_cast<unsigned long long>(map)),
      "r"(x), "r"(y), "r"(z), "r"(w), "r"(src)
      : "memory");
}

// Adds the shared-memory box at `src` (laid out as the map's swizzle says) element-wise into the
// tensor of a 4D map at element coordinates (x innermost, y, z, w), as the map's element type
// (an FP32 map: FP32 additions, each atomic, in no fixed order against other adders); elements
// outside the tensor are skipped. Asynchronous: joins this thread's current bulk group.
__device__ __forceinline__ void tma_reduce_add_4d(const void* map, unsigned int src, int x, int y,
                                                  int z, int w) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group"
      " [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(reinterpret_cast<unsigned long long>(map)),
      "r"(x), "r"(y), "r"(z), "r"(w), "r"(src)
      : "memory");
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) of this CTA's shared memory
// at `src` to global memory at `dst`, without a tensor map. Asynchronous: joins this thread's
// current bulk group, like tma_store_2d.
__device__ __forceinline__ void bulk_store(void* dst, unsigned int src, unsigned int bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(
                   reinterpret_cast<unsigned long long>(dst)),
               "r"(src), "r"(bytes)
               : "memory");
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) of global memory at `src`
// into this CTA's shared memory at `dst`, without a tensor map; completes as transaction bytes
// on the mbarrier `bar`, like tma_load_2d.
__device__ __forceinline__ void bulk_load(unsigned int dst, const void* src, unsigned int bytes,
                                          unsigned int bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(dst),
      "l"(reinterpret_cast<unsigned long long>(src)), "r"(bytes), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's bulk groups still read their shared memory.
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// Waits until every bulk group of this thread has completed (its global writes done).
__device__ __forceinline__ void bulk_wait_group_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

// Makes this thread's generic-proxy shared-memory writes visible to the async proxy (a TMA store
// that reads them after a barrier).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Orders this thread's global-memory accesses through the async proxy (bulk copies) with its
// generic ones: after the bulk stores' completion and before a release that publishes them, or
// after an acquire and before bulk loads of what it acquired.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// Synchronizes the `threads` threads (a multiple of 32) that use named barrier `id` (1..15).
__device__ __forceinline__ void named_barrier_sync(unsigned int id, unsigned int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Arrives at named barrier `id` without waiting: the other `threads` minus these wait on it with
// named_barrier_sync. A producer-consumer hand-off between warps (one side arrives, the other
// syncs).
__device__ __forceinline__ void named_barrier_arrive(unsigned int id, unsigned int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Stores four 8x8 matrices of 16-bit pairs: lane l supplies the shared address of row l % 8 of
// matrix l / 8; r[i] is this lane's pair (row lane / 4, columns 2 (lane % 4) + {0, 1}) of matrix i.
__device__ __forceinline__ void stmatrix_x4(unsigned int addr, unsigned int r0, unsigned int r1,
                                            unsigned int r2, unsigned int r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// Transposes an 8x8 matrix of 16-bit elements across the warp: each lane passes its pair (row
// lane / 4, columns 2 (lane % 4) + {0, 1}) and receives the same pair of the transpose (row
// lane / 4 of the result is column lane / 4 of the input). Every lane of the warp must call it.
__device__ __forceinline__ unsigned int movmatrix_trans(unsigned int pair) {
  unsigned int out;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(out) : "r"(pair));
  return out;
}

// stmatrix_x4 with each 8x8 matrix transposed: lane l supplies the address of row l % 8 of
// matrix l / 8 as stored, and that row receives column l % 8 of the matrix as the registers hold
// it (r[i] of each lane: row lane / 4, columns 2 (lane % 4) + {0, 1}, as for stmatrix_x4).
__device__ __forceinline__ void stmatrix_x4_trans(unsigned int addr, unsigned int r0,
                                                  unsigned int r1, unsigned int r2,
                                                  unsigned int r3) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
      "r"(r0), "r"(r1), "r"(r2), "r"(r3)
      : "memory");
}

__device__ __forceinline__ void st_shared_v2f32(unsigned int addr, float lo, float hi) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(lo), "f"(hi) : "memory");
}

__device__ __forceinline__ void st_shared_v4f32(unsigned int addr, float a, float b, float c,
                                                float d) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}

__device__ __forceinline__ void ld_shared_v4f32(unsigned int addr, float& a, float& b, float& c,
                                                float& d) {
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "r"(addr)
               : "memory");
}

// ---- global memory: partial sums (the flags between CTAs are in ptx_sm80.cuh) --------------

// 16-byte global store of four floats; `p` 16-byte aligned.
__device__ __forceinline__ void st_global_v4f32(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
}
// a, b, c, d = the four floats at `p` (16-byte aligned), loaded from L2 only (.cg).
__device__ __forceinline__ void ld_global_cg_v4f32(const float* p, float& a, float& b, float& c,
                                                   float& d) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "l"(p)
               : "memory");
}
// Orders this thread's accesses before the fence before its accesses after it, at GPU scope:
// after relaxed loads that observed release stores, it makes them acquire.
__device__ __forceinline__ void fence_acq_rel_gpu() {
  asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

// ---- shared-memory matrix descriptors (128-byte swizzle) --------------------------------------

// Descriptor bits: start address >> 4 in [0, 14), leading byte offset >> 4 in [16, 30), stride
// byte offset >> 4 in [32, 46), swizzle mode in [62, 64) with 1 = 128B. The 128B pattern XORs
// address bits [4, 7) with bits [7, 10), so tiles must be 1024-byte aligned (base offset 0).
__device__ __forceinline__ unsigned long long smem_descriptor_sw128(unsigned int addr,
                                                                    unsigned int leading_bytes,
                                                                    unsigned int stride_bytes) {
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>(leading_bytes >> 4) << 16) |
         (static_cast<unsigned long long>(stride_bytes >> 4) << 32) | (1ull << 62);
}

// `x`, from an instruction the compiler cannot see through: what is computed from it inside a loop
// is computed there, not hoisted out and held in registers across the loop.
__device__ __forceinline__ unsigned int opaque(unsigned int x) {
  unsigned int y;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

// A K-major operand (rows of 64 16-bit elements = 128 bytes, one row per M or N index), as TMA
// with 128B swizzle writes it: 8-row groups 1024 bytes apart (stride byte offset); the leading
// byte offset is unused when the instruction's K (16) lies inside one 128-byte row. Step to the
// next k16 slice by +32 bytes of `addr`.
__device__ __forceinline__ unsigned long long kmajor_descriptor(unsigned int addr) {
  return smem_descriptor_sw128(addr, 16, 1024);
}

// An MN-major operand (rows of 64 16-bit elements along N, one row per K index) made of atoms of
// 64 N-columns, each atom `atom_bytes` long and written by TMA with 128B swizzle: 8-row K groups
// 1024 bytes apart (stride byte offset), atoms `atom_bytes` apart (leading byte offset). Used with
// the wgmma transpose flag. Step to the next k16 slice by +16 rows = +2048 bytes of `addr`.
__device__ __forceinline__ unsigned long long mnmajor_descriptor(unsigned int addr,
                                                                 unsigned int atom_bytes) {
  return smem_descriptor_sw128(addr, atom_bytes, 1024);
}

// ---- warpgroup MMA --------------------------------------------------------------------------

// Orders this warpgroup's register accesses before the wgmma that follows (required before the
// first wgmma and after registers it reads were written by other instructions).
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// Closes the wgmma operations issued so far into one group.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most kPending wgmma groups of this warpgroup are in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Tells the compiler that the accumulators change here (they do, asynchronously, between a wgmma
// and its wait): it must neither read them early nor move their registers across this point.
template <int kCount>
__device__ __forceinline__ void fence_accumulators(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The same for registers an in-flight wgmma reads (A operands in registers): they must keep their
// values and registers until the wait, so fence them after it.
template <int kCount>
__device__ __forceinline__ void fence_operands(unsigned int (&a)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

// Operand lists of the wgmma wrappers, written out because inline asm takes only literal operand
// lists: KT_WGMMA_D<R> names accumulator operands %0 .. %R-1 and KT_WGMMA_C<R> binds them "+f"
// to d[0] .. d[R - 1] (constant indices only: a runtime index would put the array in local
// memory). R = N / 2 for an m64nNk16 instruction, a multiple of 4 (N a multiple of 8).
#define KT_WGMMA_D4 "%0, %1, %2, %3"
#define KT_WGMMA_D8 KT_WGMMA_D4 ", %4, %5, %6, %7"
#define KT_WGMMA_D12 KT_WGMMA_D8 ", %8, %9, %10, %11"
#define KT_WGMMA_D16 KT_WGMMA_D12 ", %12, %13, %14, %15"
#define KT_WGMMA_D20 KT_WGMMA_D16 ", %16, %17, %18, %19"
#define KT_WGMMA_D24 KT_WGMMA_D20 ", %20, %21, %22, %23"
#define KT_WGMMA_D28 KT_WGMMA_D24 ", %24, %25, %26, %27"
#define KT_WGMMA_D32 KT_WGMMA_D28 ", %28, %29, %30, %31"
#define KT_WGMMA_D36 KT_WGMMA_D32 ", %32, %33, %34, %35"
#define KT_WGMMA_D40 KT_WGMMA_D36 ", %36, %37, %38, %39"
#define KT_WGMMA_D44 KT_WGMMA_D40 ", %40, %41, %42, %43"
#define KT_WGMMA_D48 KT_WGMMA_D44 ", %44, %45, %46, %47"
#define KT_WGMMA_D52 KT_WGMMA_D48 ", %48, %49, %50, %51"
#define KT_WGMMA_D56 KT_WGMMA_D52 ", %52, %53, %54, %55"
#define KT_WGMMA_D60 KT_WGMMA_D56 ", %56, %57, %58, %59"
#define KT_WGMMA_D64 KT_WGMMA_D60 ", %60, %61, %62, %63"
#define KT_WGMMA_D68 KT_WGMMA_D64 ", %64, %65, %66, %67"
#define KT_WGMMA_D72 KT_WGMMA_D68 ", %68, %69, %70, %71"
#define KT_WGMMA_D76 KT_WGMMA_D72 ", %72, %73, %74, %75"
#define KT_WGMMA_D80 KT_WGMMA_D76 ", %76, %77, %78, %79"
#define KT_WGMMA_D84 KT_WGMMA_D80 ", %80, %81, %82, %83"
#define KT_WGMMA_D88 KT_WGMMA_D84 ", %84, %85, %86, %87"
#define KT_WGMMA_D92 KT_WGMMA_D88 ", %88, %89, %90, %91"
#define KT_WGMMA_D96 KT_WGMMA_D92 ", %92, %93, %94, %95"
#define KT_WGMMA_D100 KT_WGMMA_D96 ", %96, %97, %98, %99"
#define KT_WGMMA_D104 KT_WGMMA_D100 ", %100, %101, %102, %103"
#define KT_WGMMA_D108 KT_WGMMA_D104 ", %104, %105, %106, %107"
#define KT_WGMMA_D112 KT_WGMMA_D108 ", %108, %109, %110, %111"
#define KT_WGMMA_D116 KT_WGMMA_D112 ", %112, %113, %114, %115"
#define KT_WGMMA_D120 KT_WGMMA_D116 ", %116, %117, %118, %119"
#define KT_WGMMA_D124 KT_WGMMA_D120 ", %120, %121, %122, %123"
#define KT_WGMMA_D128 KT_WGMMA_D124 ", %124, %125, %126, %127"
#define KT_WGMMA_C4 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define KT_WGMMA_C8 KT_WGMMA_C4, "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define KT_WGMMA_C12 KT_WGMMA_C8, "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
#define KT_WGMMA_C16 KT_WGMMA_C12, "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define KT_WGMMA_C20 KT_WGMMA_C16, "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
#define KT_WGMMA_C24 KT_WGMMA_C20, "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define KT_WGMMA_C28 KT_WGMMA_C24, "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
#define KT_WGMMA_C32 KT_WGMMA_C28, "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define KT_WGMMA_C36 KT_WGMMA_C32, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
#define KT_WGMMA_C40 KT_WGMMA_C36, "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define KT_WGMMA_C44 KT_WGMMA_C40, "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
#define KT_WGMMA_C48 KT_WGMMA_C44, "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define KT_WGMMA_C52 KT_WGMMA_C48, "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
#define KT_WGMMA_C56 KT_WGMMA_C52, "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define KT_WGMMA_C60 KT_WGMMA_C56, "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
#define KT_WGMMA_C64 KT_WGMMA_C60, "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define KT_WGMMA_C68 KT_WGMMA_C64, "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
#define KT_WGMMA_C72 KT_WGMMA_C68, "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define KT_WGMMA_C76 KT_WGMMA_C72, "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
#define KT_WGMMA_C80 KT_WGMMA_C76, "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define KT_WGMMA_C84 KT_WGMMA_C80, "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
#define KT_WGMMA_C88 KT_WGMMA_C84, "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define KT_WGMMA_C92 KT_WGMMA_C88, "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91])
#define KT_WGMMA_C96 KT_WGMMA_C92, "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define KT_WGMMA_C100 KT_WGMMA_C96, "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99])
#define KT_WGMMA_C104 KT_WGMMA_C100, "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define KT_WGMMA_C108 KT_WGMMA_C104, "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107])
#define KT_WGMMA_C112 KT_WGMMA_C108, "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define KT_WGMMA_C116 KT_WGMMA_C112, "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115])
#define KT_WGMMA_C120 KT_WGMMA_C116, "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define KT_WGMMA_C124 KT_WGMMA_C120, "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123])
#define KT_WGMMA_C128 KT_WGMMA_C124, "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// One wgmma m64nNk16 with both operands in shared memory: D (+)= A·B. IA, IB, IS, ITA, ITB are
// the operand numbers of the A descriptor, B descriptor, scale-d flag and the A and B transpose
// immediates (R .. R + 4); the accumulator constraints come last (variadic: they contain commas).
#define KT_WGMMA_SS(N, TYPE, D_LIST, IA, IB, IS, ITA, ITB, ...)                              \
  asm volatile(                                                                              \
      "{\n"                                                                                  \
      ".reg .pred p;\n"                                                                      \
      "setp.ne.b32 p, %" #IS                                                                 \
      ", 0;\n"                                                                               \
      "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" D_LIST "}, %" #IA \
      ", %" #IB ", p, 1, 1, %" #ITA ", %" #ITB                                               \
      ";\n"                                                                                  \
      "}\n"                                                                                  \
      : __VA_ARGS__                                                                          \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB))
#define KT_WGMMA_SS_TYPED(N, D_LIST, IA, IB, IS, ITA, ITB, ...)        \
  if constexpr (DTypeTraits<T>::kIsBf16) {                             \
    KT_WGMMA_SS(N, "bf16", D_LIST, IA, IB, IS, ITA, ITB, __VA_ARGS__); \
  } else {                                                             \
    KT_WGMMA_SS(N, "f16", D_LIST, IA, IB, IS, ITA, ITB, __VA_ARGS__);  \
  }
// The branch of wgmma_m64k16_ss for N = 2 R.
#define KT_WGMMA_SS_CASE(N, R, R1, R2, R3, R4)                            \
  else if constexpr (kN == N) {                                           \
    KT_WGMMA_SS_TYPED(N, KT_WGMMA_D##R, R, R1, R2, R3, R4, KT_WGMMA_C##R) \
  }

// d (+)= A·B for a 64 x kN x 16 step on the tensor cores, issued by a whole warpgroup. A (64 x 16;
// K-major with kTransA 0, M-major with kTransA 1) and B (16 x kN; K-major with kTransB 0, N-major
// with kTransB 1) are shared-memory descriptors; T is kt::bf16 or kt::fp16; scale_d == 0
// overwrites d instead of accumulating.
// d holds the FP32 64 x kN tile, kN / 2 values per thread: for n8 block j, warp w, lane l,
// d[4j + {0, 1}] = (16w + l/4, 8j + 2(l%4) + {0, 1}) and d[4j + {2, 3}] the same 8 rows below.
// Asynchronous: the result is there after wgmma_commit() and wgmma_wait().
template <typename T, int kN, int kTransB, int kTransA = 0>
__device__ __forceinline__ void wgmma_m64k16_ss(float (&d)[kN / 2], unsigned long long desc_a,
                                                unsigned long long desc_b, int scale_d) {
  static_assert(kN % 8 == 0 && kN >= 16 && kN <= 256, "kN must be a multiple of 8 from 16 to 256");
  if constexpr (false) {
  }
  KT_WGMMA_SS_CASE(16, 8, 9, 10, 11, 12)
  KT_WGMMA_SS_CASE(24, 12, 13, 14, 15, 16)
  KT_WGMMA_SS_CASE(32, 16, 17, 18, 19, 20)
  KT_WGMMA_SS_CASE(40, 20, 21, 22, 23, 24)
  KT_WGMMA_SS_CASE(48, 24, 25, 26, 27, 28)
  KT_WGMMA_SS_CASE(56, 28, 29, 30, 31, 32)
  KT_WGMMA_SS_CASE(64, 32, 33, 34, 35, 36)
  KT_WGMMA_SS_CASE(72, 36, 37, 38, 39, 40)
  KT_WGMMA_SS_CASE(80, 40, 41, 42, 43, 44)
  KT_WGMMA_SS_CASE(88, 44, 45, 46, 47, 48)
  KT_WGMMA_SS_CASE(96, 48, 49, 50, 51, 52)
  KT_WGMMA_SS_CASE(104, 52, 53, 54, 55, 56)
  KT_WGMMA_SS_CASE(112, 56, 57, 58, 59, 60)
  KT_WGMMA_SS_CASE(120, 60, 61, 62, 63, 64)
  KT_WGMMA_SS_CASE(128, 64, 65, 66, 67, 68)
  KT_WGMMA_SS_CASE(136, 68, 69, 70, 71, 72)
  KT_WGMMA_SS_CASE(144, 72, 73, 74, 75, 76)
  KT_WGMMA_SS_CASE(152, 76, 77, 78, 79, 80)
  KT_WGMMA_SS_CASE(160, 80, 81, 82, 83, 84)
  KT_WGMMA_SS_CASE(168, 84, 85, 86, 87, 88)
  KT_WGMMA_SS_CASE(176, 88, 89, 90, 91, 92)
  KT_WGMMA_SS_CASE(184, 92, 93, 94, 95, 96)
  KT_WGMMA_SS_CASE(192, 96, 97, 98, 99, 100)
  KT_WGMMA_SS_CASE(200, 100, 101, 102, 103, 104)
  KT_WGMMA_SS_CASE(208, 104, 105, 106, 107, 108)
  KT_WGMMA_SS_CASE(216, 108, 109, 110, 111, 112)
  KT_WGMMA_SS_CASE(224, 112, 113, 114, 115, 116)
  KT_WGMMA_SS_CASE(232, 116, 117, 118, 119, 120)
  KT_WGMMA_SS_CASE(240, 120, 121, 122, 123, 124)
  KT_WGMMA_SS_CASE(248, 124, 125, 126, 127, 128)
  KT_WGMMA_SS_CASE(256, 128, 129, 130, 131, 132)
}

// One wgmma m64nNk16 with A in registers (four b32 registers of 16-bit pairs per thread: per
// warp, the mma.sync m16n8k16 A layout of its 16 rows) and B in shared memory. A0..A3: the A
// operand numbers; IB, IS, IT as for KT_WGMMA_SS.
#define KT_WGMMA_RS(N, TYPE, D_LIST, A0, A1, A2, A3, IB, IS, IT, ...)                         \
  asm volatile(                                                                               \
      "{\n"                                                                                   \
      ".reg .pred p;\n"                                                                       \
      "setp.ne.b32 p, %" #IS                                                                  \
      ", 0;\n"                                                                                \
      "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" D_LIST "}, {%" #A0 \
      ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #IB ", p, 1, 1, %" #IT                             \
      ";\n"                                                                                   \
      "}\n"                                                                                   \
      : __VA_ARGS__                                                                           \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(kTransB))
#define KT_WGMMA_RS_TYPED(N, D_LIST, A0, A1, A2, A3, IB, IS, IT, ...)        \
  if constexpr (DTypeTraits<T>::kIsBf16) {                                   \
    KT_WGMMA_RS(N, "bf16", D_LIST, A0, A1, A2, A3, IB, IS, IT, __VA_ARGS__); \
  } else {                                                                   \
    KT_WGMMA_RS(N, "f16", D_LIST, A0, A1, A2, A3, IB, IS, IT, __VA_ARGS__);  \
  }
// The branch of wgmma_m64k16_rs for N = 2 R.
#define KT_WGMMA_RS_CASE(N, R, R1, R2, R3, R4, R5, R6)                            \
  else if constexpr (kN == N) {                                                   \
    KT_WGMMA_RS_TYPED(N, KT_WGMMA_D##R, R, R1, R2, R3, R4, R5, R6, KT_WGMMA_C##R) \
  }

// d (+)= A·B for a 64 x kN x 16 step with A (64 x 16) in registers: a[0..3] of each thread hold
// its warp's rows 16w + l/4 (+8) and columns 2(l%4) (+8) as 16-bit pairs, which is how an FP32
// accumulator tile converted pairwise lays out (accumulator n8 blocks 2t and 2t + 1 give the A
// registers of k16 step t). B and the rest as wgmma_m64k16_ss. The A registers must stay
// unchanged until the wgmma completes (keep them live past the wait).
template <typename T, int kN, int kTransB>
__device__ __forceinline__ void wgmma_m64k16_rs(float (&d)[kN / 2], const unsigned int (&a)[4],
                                                unsigned long long desc_b, int scale_d) {
  static_assert(kN % 8 == 0 && kN >= 16 && kN <= 256, "kN must be a multiple of 8 from 16 to 256");
  if constexpr (false) {
  }
  KT_WGMMA_RS_CASE(16, 8, 9, 10, 11, 12, 13, 14)
  KT_WGMMA_RS_CASE(24, 12, 13, 14, 15, 16, 17, 18)
  KT_WGMMA_RS_CASE(32, 16, 17, 18, 19, 20, 21, 22)
  KT_WGMMA_RS_CASE(40, 20, 21, 22, 23, 24, 25, 26)
  KT_WGMMA_RS_CASE(48, 24, 25, 26, 27, 28, 29, 30)
  KT_WGMMA_RS_CASE(56, 28, 29, 30, 31, 32, 33, 34)
  KT_WGMMA_RS_CASE(64, 32, 33, 34, 35, 36, 37, 38)
  KT_WGMMA_RS_CASE(72, 36, 37, 38, 39, 40, 41, 42)
  KT_WGMMA_RS_CASE(80, 40, 41, 42, 43, 44, 45, 46)
  KT_WGMMA_RS_CASE(88, 44, 45, 46, 47, 48, 49, 50)
  KT_WGMMA_RS_CASE(96, 48, 49, 50, 51, 52, 53, 54)
  KT_WGMMA_RS_CASE(104, 52, 53, 54, 55, 56, 57, 58)
  KT_WGMMA_RS_CASE(112, 56, 57, 58, 59, 60, 61, 62)
  KT_WGMMA_RS_CASE(120, 60, 61, 62, 63, 64, 65, 66)
  KT_WGMMA_RS_CASE(128, 64, 65, 66, 67, 68, 69, 70)
  KT_WGMMA_RS_CASE(136, 68, 69, 70, 71, 72, 73, 74)
  KT_WGMMA_RS_CASE(144, 72, 73, 74, 75, 76, 77, 78)
  KT_WGMMA_RS_CASE(152, 76, 77, 78, 79, 80, 81, 82)
  KT_WGMMA_RS_CASE(160, 80, 81, 82, 83, 84, 85, 86)
  KT_WGMMA_RS_CASE(168, 84, 85, 86, 87, 88, 89, 90)
  KT_WGMMA_RS_CASE(176, 88, 89, 90, 91, 92, 93, 94)
  KT_WGMMA_RS_CASE(184, 92, 93, 94, 95, 96, 97, 98)
  KT_WGMMA_RS_CASE(192, 96, 97, 98, 99, 100, 101, 102)
  KT_WGMMA_RS_CASE(200, 100, 101, 102, 103, 104, 105, 106)
  KT_WGMMA_RS_CASE(208, 104, 105, 106, 107, 108, 109, 110)
  KT_WGMMA_RS_CASE(216, 108, 109, 110, 111, 112, 113, 114)
  KT_WGMMA_RS_CASE(224, 112, 113, 114, 115, 116, 117, 118)
  KT_WGMMA_RS_CASE(232, 116, 117, 118, 119, 120, 121, 122)
  KT_WGMMA_RS_CASE(240, 120, 121, 122, 123, 124, 125, 126)
  KT_WGMMA_RS_CASE(248, 124, 125, 126, 127, 128, 129, 130)
  KT_WGMMA_RS_CASE(256, 128, 129, 130, 131, 132, 133, 134)
}

#undef KT_WGMMA_RS_CASE
#undef KT_WGMMA_RS_TYPED
#undef KT_WGMMA_RS
#undef KT_WGMMA_SS_CASE
#undef KT_WGMMA_SS_TYPED
#undef KT_WGMMA_SS
#undef KT_WGMMA_D4
#undef KT_WGMMA_D8
#undef KT_WGMMA_D12
#undef KT_WGMMA_D16
#undef KT_WGMMA_D20
#undef KT_WGMMA_D24
#undef KT_WGMMA_D28
#undef KT_WGMMA_D32
#undef KT_WGMMA_D36
#undef KT_WGMMA_D40
#undef KT_WGMMA_D44
#undef KT_WGMMA_D48
#undef KT_WGMMA_D52
#undef KT_WGMMA_D56
#undef KT_WGMMA_D60
#undef KT_WGMMA_D64
#undef KT_WGMMA_D68
#undef KT_WGMMA_D72
#undef KT_WGMMA_D76
#undef KT_WGMMA_D80
#undef KT_WGMMA_D84
#undef KT_WGMMA_D88
#undef KT_WGMMA_D92
#undef KT_WGMMA_D96
#undef KT_WGMMA_D100
#undef KT_WGMMA_D104
#undef KT_WGMMA_D108
#undef KT_WGMMA_D112
#undef KT_WGMMA_D116
#undef KT_WGMMA_D120
#undef KT_WGMMA_D124
#undef KT_WGMMA_D128
#undef KT_WGMMA_C4
#undef KT_WGMMA_C8
#undef KT_WGMMA_C12
#undef KT_WGMMA_C16
#undef KT_WGMMA_C20
#undef KT_WGMMA_C24
#undef KT_WGMMA_C28
#undef KT_WGMMA_C32
#undef KT_WGMMA_C36
#undef KT_WGMMA_C40
#undef KT_WGMMA_C44
#undef KT_WGMMA_C48
#undef KT_WGMMA_C52
#undef KT_WGMMA_C56
#undef KT_WGMMA_C60
#undef KT_WGMMA_C64
#undef KT_WGMMA_C68
#undef KT_WGMMA_C72
#undef KT_WGMMA_C76
#undef KT_WGMMA_C80
#undef KT_WGMMA_C84
#undef KT_WGMMA_C88
#undef KT_WGMMA_C92
#undef KT_WGMMA_C96
#undef KT_WGMMA_C100
#undef KT_WGMMA_C104
#undef KT_WGMMA_C108
#undef KT_WGMMA_C112
#undef KT_WGMMA_C116
#undef KT_WGMMA_C120
#undef KT_WGMMA_C124
#undef KT_WGMMA_C128

// An FP32 accumulator tile of a 64 x (16 kSteps) wgmma result as the A operand of
// wgmma_m64k16_rs over K = 16 kSteps: the values of n8 blocks 2t and 2t + 1, converted to T in
// pairs, are the four A registers of k16 step t (the accumulator and A-register layouts agree per
// warp).
template <typename T, int kSteps>
__device__ __forceinline__ void pack_a_operand(unsigned int (&a)[kSteps][4],
                                               const float (&acc)[kSteps * 8]) {
#pragma unroll
  for (int t = 0; t < kSteps; ++t)
#pragma unroll
    for (int r = 0; r < 4; ++r)
      a[t][r] = DTypeTraits<T>::pack2(acc[8 * t + 2 * r], acc[8 * t + 2 * r + 1]);
}

// ---- register reallocation ------------------------------------------------------------------

// Lowers (kDec) or raises this warpgroup's per-thread register limit to kRegs (a multiple of 8 in
// [24, 256]); whole warpgroup. Only effective under __launch_bounds__(threads, 1), and the
// decreases and increases of one CTA must balance the registers allocated at launch.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

}  // namespace kt
