// Element types of the kernel templates: 2-byte tags for bf16 and fp16 (NVRTC gets no CUDA
// headers) and DTypeTraits, which converts to and from float with round-to-nearest-even, stores
// one or two adjacent elements, and classifies bit patterns as finite or not.
#pragma once

namespace kt {

struct bf16 {
  unsigned short bits;
};

struct fp16 {
  unsigned short bits;
};

template <typename T>
struct DTypeTraits;

// The two 16-bit float formats, which differ only in their conversions and exponent field.
template <typename T, bool kBf16>
struct Float16Traits {
  static constexpr bool kIsMmaOperand = true;
  static constexpr bool kIsBf16 = kBf16;
  static __device__ __forceinline__ float to_float(T v) {
    if constexpr (kBf16) {
      // NOTE: bf16 is the upper half of an FP32 bit pattern, so widening is a shift.
      return __uint_as_float(static_cast<unsigned int>(v.bits) << 16);
    } else {
      float out;
      asm("cvt.f32.f16 %0, %1;" : "=f"(out) : "h"(v.bits));
      return out;
    }
  }
  static __device__ __forceinline__ T from_float(float v) {
    T out;
    if constexpr (kBf16)
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(out.bits) : "f"(v));
    else
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(out.bits) : "f"(v));
    return out;
  }
  // Two values as one 32-bit word, `lo` at the lower address.
  // NOTE: cvt.*x2 puts its first source operand in the upper half.
  static __device__ __forceinline__ unsigned int pack2(float lo, float hi) {
    unsigned int out;
    if constexpr (kBf16)
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(out) : "f"(hi), "f"(lo));
    else
      asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(out) : "f"(hi), "f"(lo));
    return out;
  }
  static __device__ __forceinline__ bool is_finite(T v) {
    constexpr unsigned int kExponentBits = kBf16 ? 0x7F80u : 0x7C00u;
    return (v.bits & kExponentBits) != kExponentBits;
  }
  static __device__ __forceinline__ T nan() { return T{0xFFFFu}; }
};

template <>
struct DTypeTraits<bf16> : Float16Traits<bf16, true> {};

template <>
struct DTypeTraits<fp16> : Float16Traits<fp16, false> {};

template <>
struct DTypeTraits<float> {
  static constexpr bool kIsMmaOperand = false;
  static __device__ __forceinline__ float to_float(float v) { return v; }
  static __device__ __forceinline__ float from_float(float v) { return v; }
  static __device__ __forceinline__ bool is_finite(float v) {
    return (__float_as_uint(v) & 0x7F800000u) != 0x7F800000u;
  }
  static __device__ __forceinline__ float nan() { return __uint_as_float(0x7FFFFFFFu); }
};

// Stores `v` converted to T at `p`.
template <typename T>
__device__ __forceinline__ void store_one(T* p, float v) {
  *p = DTypeTraits<T>::from_float(v);
}

// Stores `lo`, `hi` converted to T at p[0], p[1] in one access; p must be aligned to 2 * sizeof(T).
template <typename T>
__device__ __forceinline__ void store_two(T* p, float lo, float hi) {
  if constexpr (sizeof(T) == 2) {
    *reinterpret_cast<unsigned int*>(p) = DTypeTraits<T>::pack2(lo, hi);
  } else {
    struct alignas(8) Pair {
      float lo, hi;
    };
    *reinterpret_cast<Pair*>(p) = Pair{lo, hi};
  }
}

// Whether rows of T starting at `c`, `ldc` elements apart, allow store_two at every even column.
template <typename T>
__device__ __forceinline__ bool pairs_aligned(const T* c, long long ldc) {
  return ldc % 2 == 0 && reinterpret_cast<unsigned long long>(c) % (2 * sizeof(T)) == 0;
}

// Whether rows of T starting at `c`, `ldc` elements apart, allow one access of four elements at
// every column that is a multiple of 4.
template <typename T>
__device__ __forceinline__ bool quads_aligned(const T* c, long long ldc) {
  return ldc % 4 == 0 && reinterpret_cast<unsigned long long>(c) % (4 * sizeof(T)) == 0;
}

// Stores `lo`, `hi` at columns col, col + 1 of `row`, a row of n columns: one access when both
// are in bounds and `aligned` (pairs_aligned), else each one that is in bounds.
template <typename T>
__device__ __forceinline__ void store_pair_masked(T* row, int col, int n, float lo, float hi,
                                                  bool aligned) {
  if (aligned && col + 1 < n) {
    store_two(row + col, lo, hi);
  } else {
    if (col < n) store_one(row + col, lo);
    if (col + 1 < n) store_one(row + col + 1, hi);
  }
}

}  // namespace kt
