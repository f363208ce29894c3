// Device primitives of the sm_80 kernel family as inline PTX: shared-window addresses, cp.async,
// ldmatrix, mma.sync m16n8k16, shared and global vector moves, ex2, and GPU-scope flag loads and
// stores between CTAs. Valid on sm_80 and later (sm_90a too); needs no CUDA header, so NVRTC
// compiles it with no include path.
#pragma once

#include "kerntune/common/dtypes.cuh"

namespace kt {

// Address of `p` in the shared window (what cp.async, ldmatrix and st.shared take).
__device__ __forceinline__ unsigned int shared_address(const void* p) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes from global `src` to shared `dst` asynchronously, bypassing L1. Only the first
// `src_bytes` (0 or 16) are read; the rest of the 16 bytes are zero-filled, so src_bytes = 0
// writes zeros without touching global memory. Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async_16(unsigned int dst, const void* src,
                                            unsigned int src_bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

// Copies 4 bytes from global `src` to shared `dst` asynchronously (through L1: .ca, the only
// cp.async of fewer than 16 bytes). Only the first `src_bytes` (0 or 4) are read; src_bytes = 0
// writes a zero without touching global memory. Both addresses 4-byte aligned.
__device__ __forceinline__ void cp_async_4(unsigned int dst, const void* src,
                                           unsigned int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

// Copies 8 bytes as cp_async_4 does 4 (src_bytes 0 or 8; both addresses 8-byte aligned).
__device__ __forceinline__ void cp_async_8(unsigned int dst, const void* src,
                                           unsigned int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

// Closes the cp.async operations issued so far by this thread into one group.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Loads four 8x8 matrices of 16-bit elements; lane i gives the row address of matrix i / 8,
// row i % 8. Each lane receives, per matrix, the pair at row lane / 4, columns 2 * (lane % 4).
__device__ __forceinline__ void ldmatrix_x4(unsigned int (&r)[4], unsigned int addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// As ldmatrix_x4, but each lane receives the pair at column lane / 4, rows 2 * (lane % 4).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned int (&r)[4], unsigned int addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a * b for one 16x8x16 tile with FP32 accumulators; a is the row-major 16x16 A fragment,
// b the column-major 16x8 B fragment, both of element type T (kt::bf16 or kt::fp16).
template <typename T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned int (&a)[4],
                                             const unsigned int (&b)[2]) {
  if constexpr (DTypeTraits<T>::kIsBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// Stores the low 16 bits of `v` to shared address `addr` (2-byte aligned).
__device__ __forceinline__ void st_shared_2(unsigned int addr, unsigned int v) {
  asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(static_cast<unsigned short>(v))
               : "memory");
}

// Stores the 32-bit word `v` to shared address `addr` (4-byte aligned).
__device__ __forceinline__ void st_shared_4(unsigned int addr, unsigned int v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

// Loads the 32-bit word at shared address `addr` (4-byte aligned). Volatile, so it is issued
// where it stands (its value is not kept in a register across code that needs all of them).
__device__ __forceinline__ unsigned int ld_shared_4(unsigned int addr) {
  unsigned int v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

// Loads 16 bytes from shared address `addr` (16-byte aligned).
__device__ __forceinline__ void ld_shared_16(unsigned int (&v)[4], unsigned int addr) {
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "r"(addr)
               : "memory");
}

// Stores 16 bytes to global memory at `p` (16-byte aligned).
__device__ __forceinline__ void st_global_16(void* p, const unsigned int (&v)[4]) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(v[0]), "r"(v[1]),
               "r"(v[2]), "r"(v[3])
               : "memory");
}

// *p += v at GPU scope, relaxed, returning nothing (a reduction L2 performs; `p` 4-byte aligned).
__device__ __forceinline__ void red_add_f32(float* p, float v) {
  asm volatile("red.relaxed.gpu.global.add.f32 [%0], %1;\n" ::"l"(p), "f"(v) : "memory");
}

// 2^x on the special-function unit (ex2.approx.ftz.f32, a fast approximation; -inf gives +0,
// subnormal inputs and results flush to zero).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Zeroes kA x kB mma.sync m16n8 accumulator fragments (four FP32 registers each).
template <int kA, int kB>
__device__ __forceinline__ void zero_fragments(float (&f)[kA][kB][4]) {
#pragma unroll
  for (int a = 0; a < kA; ++a)
#pragma unroll
    for (int b = 0; b < kB; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) f[a][b][e] = 0.0f;
}

// Flags between CTAs: loads and stores of 32-bit flag words at GPU scope (PTX memory model,
// sm_70+): relaxed ones are morally strong (coherent with every other GPU-scope access of the word)
// without ordering anything else; acquire orders this thread's later accesses after the load,
// release orders its earlier ones (and, through a barrier before it, those of the threads that
// met it) before the store.
__device__ __forceinline__ unsigned int ld_relaxed_gpu(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned int ld_acquire_gpu(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed_gpu(unsigned int* p, unsigned int v) {
  asm volatile("st.relaxed.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release_gpu(unsigned int* p, unsigned int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
// Returns the old value; acquire and release at once.
__device__ __forceinline__ unsigned int atom_add_acq_rel_gpu(unsigned int* p, unsigned int v) {
  unsigned int old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}

// Suspends the thread for about `ns` nanoseconds (a spin loop's backoff).
__device__ __forceinline__ void nanosleep_ns(unsigned int ns) {
  asm volatile("nanosleep.u32 %0;\n" ::"r"(ns));
}

}  // namespace kt
