// Kernel parameter blocks of the GEMM templates. Shared verbatim by the host (C++) and the
// device (NVRTC), so it uses plain types only; the host static_asserts the layout.
#pragma once

#if defined(__CUDACC_RTC__)
#include "kerntune/common/tma_descriptor.h"
#else
#include "common/tma_descriptor.h"
#endif

namespace kt {

struct GemmParams {
  const void* a;        // M x K, row-major, leading dimension lda
  const void* b;        // K x N (nn) or N x K (nt), row-major, leading dimension ldb
  void* c;              // M x N, row-major, leading dimension ldc (sm80 and small-M: unused
                        // with split-K, the reduce kernel writes it)
  float* workspace;     // split-K only, FP32 partial sums: sm80 and small-M, split_k slices of
                        // M x N (slice stride m * n); sm90, a tile slot per (tile, split <
                        // num_splits - 1) in the consumers' fragment order (gemm_sm90.cuh);
                        // sm90 stream-K, a tile slot per CTA
  unsigned int* flags;  // sm90 split-K and stream-K only: the workspace's flag region (launch
                        // epoch, arrival count, ready flags; zeroed once at allocation, see
                        // gemm_sm90.cuh)
  long long lda;        // in elements
  long long ldb;
  long long ldc;
  int m;
  int n;
  int k;
  int k_per_split;   // K range of blockIdx.z: [z * k_per_split, (z + 1) * k_per_split)
  int raster_group;  // CTA rows per group of the grouped raster order
  int tiles_m;       // ceil(m / tile_m)
  int tiles_n;       // ceil(n / tile_n)
  int num_splits;    // split-K slices: gridDim.z of sm80, part of the work-unit count of sm90
  int sk_units;      // sm90 stream-K: the last units, shared out by K over every CTA (0: none)
  int sk_iters;      // sm90 stream-K: k-tiles of those units per CTA (the last CTA's fewer)
};

// The sm90 family's parameter block: the tensor maps of A and B (128B-swizzled boxes of 64
// K-elements, see gemm_sm90.cuh), of C (TMA-store epilogues only; zeros otherwise) and the
// common block.
struct GemmSm90Params {
  TmaDescriptor a_map;
  TmaDescriptor b_map;
  TmaDescriptor c_map;
  GemmParams gemm;
};

// `kerntune trace` (gemm_sm90.cuh, "phase trace", compiled only with -DKT_TRACE): u64
// %globaltimer stamps [CTA][event] of the first kGemmTraceMaxCtas CTAs, in the last
// kGemmTraceBytes of the split-K workspace's flag region; events in this order, then the CTA's
// SM and two %clock64 readings (values, not stamps).
enum GemmTraceEvent : int {
  kTraceEntry = 0,     // thread 0 at entry
  kTraceFirstLoad,     // producer: first TMA load issued
  kTraceFirstFull,     // consumer 0: first stage landed
  kTraceMainLoopDone,  // consumer 0: last wgmma of the unit complete
  kTracePublished,     // consumer 0, split-K: partial sums stored and flag released (cluster
                       // split-K: staged and the cluster barrier passed; stream-K: the flags of
                       // the CTA's publishing piece released, by producer thread 64)
  kTraceFlagsReady,    // consumer 0, split-K distributed: every other split's flag seen (stream-K:
                       // an owner's peers' partial sums added)
  kTraceStored,        // consumer 0: its C (or stripe of C) stored
  kTraceEpochRead,     // split-K: begin_launch done (producer warp 1)
  kTraceSmId,          // thread 0 at entry: %smid + 1 (0: never written)
  kTraceEntryCycles,   // thread 0 at entry: the SM's %clock64
  kTraceLoopCycles,    // consumer 0 at kTraceMainLoopDone: the SM's %clock64
  kGemmTraceEvents
};
constexpr int kGemmTraceTimedEvents = kTraceSmId;
constexpr int kGemmTraceMaxCtas = 256;
constexpr int kGemmTraceBytes = kGemmTraceMaxCtas * kGemmTraceEvents * 8;

struct SplitKReduceParams {
  const float* workspace;  // splits x m x n FP32 partial sums
  void* c;                 // M x N output, leading dimension ldc
  long long ldc;
  int m;
  int n;
  int splits;
  int reserved;
};

// gemm_pad_rows: a rows x cols matrix of 2-byte elements copied from `src` (leading dimension
// src_ld, any) to `dst` (leading dimension dst_ld, a multiple of 8: 16-byte rows).
struct GemmPadParams {
  const void* src;
  void* dst;
  long long src_ld;  // in elements
  long long dst_ld;
  int rows;
  int cols;
};

}  // namespace kt
