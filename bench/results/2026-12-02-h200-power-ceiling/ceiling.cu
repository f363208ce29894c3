// ceiling.cu: the H200's tensor-core throughput at its power limit, without and with memory
// traffic beside it. A standalone diagnostic (not part of kerntune's build): one CTA per SM, two
// consumer warpgroups, each issuing the 128 x 256 GEMM tile's wgmma stream (four m64n256k16 a
// 64-deep k-tile, operands in shared memory, one group committed a k-tile and one left in flight)
// over two stages filled once with random BF16 values, so the tensor cores see data like a GEMM's.
// A ninth warp adds the traffic, bulk-copying 48 KB chunks (a k-tile's operands) into shared
// memory the wgmma does not read:
//   mode 0  none: nothing moves through L2 or DRAM;
//   mode 1  from an L2-resident 15 MB buffer, as fast as the SM takes them, while the wgmma runs;
//   mode 2  the same from a 4 GB buffer (DRAM);
//   mode 3  clusters of two, one chunk a k-tile (the GEMM's intake), the same chunk for both CTAs
//           of a pair (as a pair shares an operand block), each loading it whole;
//   mode 4  as 3, each CTA loading half and multicasting it to both;
//   mode 5  as 3, launched plainly (CTA pairs by index, no cluster).
// Thread 0 stamps %globaltimer and %clock64 after the fill and after its last wait. Reported per
// mode and launch length (80, 280 and 2300 k-tiles a CTA: 1536^2's, 4100 x 4096^2's and 8192^3's):
// the launch's event time (the fill, and in modes 3-5 the loader's tail, included), the CTAs'
// median clock, the cycles a k-tile (the instruction's floor is 1024), the TFLOP/s that gives on
// every SM, and the bytes loaded a SM over the wgmma's time. Each timed launch follows a 256 MB
// memset, as kerntune's bench launches follow its L2 flush.
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O2 -std=c++17 -o ceiling ceiling.cu
// Run:   ceiling [REPS [MODE...]]   (10 launches a row, every mode, by default)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,            \
                   cudaGetErrorString(e_));                                     \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

constexpr int kStages = 2;
constexpr int kStageBytes = 128 * 128 + 256 * 128;  // A: 128 rows x 64 k; B: 256 rows x 64 k
constexpr int kChunkBytes = 48 * 1024;  // one 128 x 256 k-tile's operands
constexpr int kSmemBytes = kStages * kStageBytes + 2 * kChunkBytes + 1024 + 64;  // + barriers

__device__ __forceinline__ unsigned long long desc_sw128(unsigned int addr) {
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) | (1ull << 16) |
         (64ull << 32) | (1ull << 62);
}

__device__ __forceinline__ unsigned int hash32(unsigned int x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}

#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
              "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define D32(i) D8(i), D8(i + 8), D8(i + 16), D8(i + 24)

__device__ __forceinline__ void wgmma_n256(float (&d)[128], unsigned long long a,
                                           unsigned long long b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
      "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, "
      "%126, %127}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : D32(0), D32(32), D32(64), D32(96)
      : "l"(a), "l"(b));
}

__device__ __forceinline__ void mbar_wait(unsigned int bar, unsigned int parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ unsigned int cluster_rank() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Modes 3 and 4 (clusters of two): one 48 KB chunk a k-tile, the GEMM's own intake, the same
// chunk for both CTAs of a pair (as a pair shares an operand block). Mode 3: each CTA loads the
// whole chunk itself. Mode 4: each loads its half and multicasts it to both. Before a buffer is
// refilled, each CTA knows the peer's previous fill of it completed (an arrive on the peer's
// ack barrier), so no byte of the next fill lands in a phase still open.
__device__ void load_pairs(int ktiles, bool multicast, const unsigned char* src,
                           unsigned long long src_bytes, unsigned int scratch, unsigned int bars,
                           unsigned long long* stamps) {
  const unsigned int rank = cluster_rank();
  const unsigned int acks = bars + 16;
  unsigned int peer_acks = 0;
  if (multicast)
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer_acks) : "r"(acks), "r"(rank ^ 1u));
  unsigned long long off = (static_cast<unsigned long long>(blockIdx.x / 2) * 7919u * kChunkBytes) % src_bytes;
  for (int i = 0; i < ktiles; ++i) {
    const int buf = i & 1;
    if (i >= 2) {
      const unsigned int parity = ((i >> 1) - 1) & 1;
      mbar_wait(bars + 8 * buf, parity);
      if (multicast) {
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n"
                     ::"r"(peer_acks + 8 * buf) : "memory");
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "ACK_%=:\n"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
            "@!p bra ACK_%=;\n"
            "}\n" ::"r"(acks + 8 * buf), "r"(parity) : "memory");
      }
    }
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bars + 8 * buf),
                 "r"(kChunkBytes) : "memory");
    const unsigned int dst = scratch + buf * kChunkBytes;
    if (multicast) {
      const unsigned int half = kChunkBytes / 2;
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
          "[%0], [%1], %2, [%3], %4;\n"
          ::"r"(dst + rank * half), "l"(src + off + rank * half), "r"(half), "r"(bars + 8 * buf),
          "h"(static_cast<unsigned short>(3)) : "memory");
    } else {
      for (int c = 0; c < 3; ++c) {
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
            ::"r"(dst + c * (kChunkBytes / 3)), "l"(src + off + c * (kChunkBytes / 3)),
            "r"(kChunkBytes / 3), "r"(bars + 8 * buf) : "memory");
      }
    }
    off += 66ull * kChunkBytes;
    if (off + kChunkBytes > src_bytes) off %= kChunkBytes * 66ull;
  }
  for (int j = ktiles - 2; j < ktiles; ++j)
    if (j >= 0) mbar_wait(bars + 8 * (j & 1), (j >> 1) & 1);
  stamps[6 * blockIdx.x + 5] = static_cast<unsigned long long>(ktiles) * kChunkBytes;
}

// The modes are the header's. Modes 1 and 2 load until the consumers raise `done`.
__global__ void __launch_bounds__(288, 1)
    ceiling(int ktiles, int mode, const unsigned char* src, unsigned long long src_bytes,
            unsigned long long* stamps, float* sink) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned int raw = static_cast<unsigned int>(__cvta_generic_to_shared(smem_raw));
  const unsigned int base = (raw + 1023) & ~1023u;
  unsigned char* smem = smem_raw + (base - raw);
  const unsigned int scratch = base + kStages * kStageBytes;
  const unsigned int bars = scratch + 2 * kChunkBytes;
  volatile int* done = reinterpret_cast<volatile int*>(smem + (bars - base) + 32);
  // Random BF16 in [-1, 1): sign, exponent 126 or 125, random mantissa (never zero).
  unsigned int* words = reinterpret_cast<unsigned int*>(smem);
  for (int i = threadIdx.x; i < kStages * kStageBytes / 4; i += blockDim.x) {
    const unsigned int h = hash32(i * 2654435761u + blockIdx.x * 97u + 12345u);
    const unsigned int lo = (h & 0x807Fu) | (0x3E80u + ((h >> 7) & 0x80u));
    const unsigned int hi = ((h >> 16) & 0x807Fu) | (0x3E80u + ((h >> 23) & 0x80u));
    words[i] = lo | (hi << 16);
  }
  if (threadIdx.x == 0) {
    for (int b = 0; b < 4; ++b)  // two fill barriers, two acks (modes 3, 4)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bars + 8 * b) : "memory");
    *done = 0;
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (mode >= 3) {
    cluster_sync_all();  // the peer's barriers exist before anything reaches them
  } else {
    __syncthreads();
  }
  if (threadIdx.x >= 256) {  // the loader warp
    if (mode == 0 || (mode <= 2 && threadIdx.x != 256)) return;
    if (mode >= 3) {
      if (threadIdx.x == 256) load_pairs(ktiles, mode == 4, src, src_bytes, scratch, bars, stamps);
      cluster_sync_all();
      return;
    }
    unsigned long long off = (static_cast<unsigned long long>(blockIdx.x) * 7919u * kChunkBytes) % src_bytes;
    unsigned long long loaded = 0;
    int i = 0;
    for (; *done == 0; ++i) {
      const int buf = i & 1;
      if (i >= 2) mbar_wait(bars + 8 * buf, ((i >> 1) - 1) & 1);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bars + 8 * buf),
                   "r"(kChunkBytes) : "memory");
      for (int c = 0; c < 3; ++c) {
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
            ::"r"(scratch + buf * kChunkBytes + c * (kChunkBytes / 3)),
            "l"(src + off + c * (kChunkBytes / 3)), "r"(kChunkBytes / 3), "r"(bars + 8 * buf)
            : "memory");
      }
      loaded += kChunkBytes;
      off += 132ull * kChunkBytes;
      if (off + kChunkBytes > src_bytes) off %= kChunkBytes * 132ull;
    }
    for (int j = i - 2; j < i; ++j)
      if (j >= 0) mbar_wait(bars + 8 * (j & 1), (j >> 1) & 1);
    stamps[6 * blockIdx.x + 5] = loaded;
    return;
  }
  unsigned long long t0 = 0, c0 = 0;
  if (threadIdx.x == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    c0 = clock64();
  }
  const int wg = threadIdx.x / 128;
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  for (int kt = 0; kt < ktiles; ++kt) {
    const unsigned int stage = base + (kt % kStages) * kStageBytes;
    const unsigned int a = stage + wg * 64 * 128, b = stage + 128 * 128;
#pragma unroll
    for (int k = 0; k < 4; ++k) wgmma_n256(d, desc_sw128(a + 32 * k), desc_sw128(b + 32 * k));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  if (threadIdx.x == 0) {
    unsigned long long t1, smid;
    const unsigned long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    asm volatile("{ .reg .u32 r; mov.u32 r, %%smid; cvt.u64.u32 %0, r; }" : "=l"(smid));
    unsigned long long* out = stamps + 6 * blockIdx.x;
    out[0] = t0; out[1] = t1; out[2] = c0; out[3] = c1; out[4] = smid;
    if (mode == 0) out[5] = 0;
    *done = 1;
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += d[i];
  sink[blockIdx.x * 256 + threadIdx.x] = s;
  if (mode >= 3) cluster_sync_all();  // no CTA leaves while its peer may still reach it
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaFuncSetAttribute(ceiling, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const int reps = argc > 1 ? std::atoi(argv[1]) : 10;
  const unsigned long long l2_bytes = 320ull * kChunkBytes;      // 15 MB: stays in L2
  const unsigned long long dram_bytes = 87381ull * kChunkBytes;  // 4 GB: streams from DRAM
  unsigned long long* stamps;
  float* sink;
  unsigned char* src;
  void* gap;
  const size_t gap_bytes = 256u << 20;
  CHECK(cudaMalloc(&stamps, 6 * sizeof(unsigned long long) * sms));
  CHECK(cudaMalloc(&sink, sizeof(float) * 256 * sms));
  CHECK(cudaMalloc(&src, dram_bytes));
  CHECK(cudaMalloc(&gap, gap_bytes));
  {  // random bytes, so the loaded lines toggle as a GEMM's operands do
    std::vector<unsigned int> h(dram_bytes / 4 / 64);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<unsigned int>(i * 2654435761u) ^ 0x5bd1e995u;
    for (int k = 0; k < 64; ++k)
      CHECK(cudaMemcpy(src + k * (dram_bytes / 64), h.data(), dram_bytes / 64, cudaMemcpyHostToDevice));
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::printf("%d SMs, %d timed launches per row, each after a 256 MB memset\n", sms, reps);
  std::printf("%5s %8s %10s %9s %11s %13s %12s\n", "mode", "k-tiles", "launch_us", "clk_MHz",
              "cyc/k-tile", "TFLOP/s@clk", "load_GB/s/SM");
  std::vector<int> modes;
  for (int i = 2; i < argc; ++i) modes.push_back(std::atoi(argv[i]));
  if (modes.empty()) modes = {0, 1, 2, 3, 4, 5};
  for (int mode : modes) {
    for (int ktiles : {80, 280, 2300}) {
      std::vector<double> us, clk, cyc, gbs;
      for (int r = 0; r < reps + 3; ++r) {
        CHECK(cudaMemsetAsync(gap, r & 0xFF, gap_bytes));
        CHECK(cudaEventRecord(e0));
        const unsigned long long bytes = mode == 2 ? dram_bytes : l2_bytes;
        if (mode <= 2 || mode == 5) {
          ceiling<<<sms, 288, kSmemBytes>>>(ktiles, mode, src, bytes, stamps, sink);
        } else {
          cudaLaunchConfig_t cfg = {};
          cfg.gridDim = dim3(sms);
          cfg.blockDim = dim3(288);
          cfg.dynamicSmemBytes = kSmemBytes;
          cudaLaunchAttribute attr;
          attr.id = cudaLaunchAttributeClusterDimension;
          attr.val.clusterDim.x = 2;
          attr.val.clusterDim.y = 1;
          attr.val.clusterDim.z = 1;
          cfg.attrs = &attr;
          cfg.numAttrs = 1;
          CHECK(cudaLaunchKernelEx(&cfg, ceiling, ktiles, mode, static_cast<const unsigned char*>(src),
                                   bytes, stamps, sink));
        }
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaGetLastError());
        if (r < 3) continue;
        float ms = 0.f;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        std::vector<unsigned long long> h(6 * sms);
        CHECK(cudaMemcpy(h.data(), stamps, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
        std::vector<double> c, k, g;
        for (int b = 0; b < sms; ++b) {
          const double ns = double(h[6 * b + 1] - h[6 * b]);
          const double cycles = double(h[6 * b + 3] - h[6 * b + 2]);
          c.push_back(cycles / ns * 1e3);
          k.push_back(cycles / ktiles);
          g.push_back(double(h[6 * b + 5]) / ns);
        }
        us.push_back(ms * 1e3);
        clk.push_back(median(c));
        cyc.push_back(median(k));
        gbs.push_back(median(g));
      }
      const double mhz = median(clk), kc = median(cyc);
      std::printf("%5d %8d %10.2f %9.0f %11.1f %13.1f %12.1f\n", mode, ktiles, median(us), mhz, kc,
                  2.0 * 128 * 256 * 64 / kc * mhz * 1e6 * sms * 1e-12, median(gbs));
    }
  }
  return 0;
}
